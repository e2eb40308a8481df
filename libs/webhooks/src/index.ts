export * from './addresses';
export * from './schedule';
export * from './signing';
export * from './window';
export * from './attempt-errors';
export * from './bodies';
export * from './redaction';
