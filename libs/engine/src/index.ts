export * from './answer';
export * from './credentials';
export * from './failures';
export * from './prices';
export * from './request';
export * from './slots';
export * from './completion';
export * from './token-probabilities';
