export * from './sealing';
export * from './keyring';
