export * from './parse-body';
export * from './account';
export * from './partner';
export * from './engine';
export * from './decisions';
export * from './billing';
export * from './delivery';
