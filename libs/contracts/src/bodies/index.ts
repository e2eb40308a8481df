export * from './parse-body';
export * from './account';
