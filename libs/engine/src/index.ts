export * from './answer';
export * from './failures';
export * from './prices';
export * from './request';
