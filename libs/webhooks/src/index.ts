export * from './addresses';
export * from './schedule';
export * from './signing';
