export * from './errors';
export * from './subjects';
export * from './messages';
export * from './nats-permissions';
export * from './public-api';
