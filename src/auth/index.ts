/** Authentication, request budgets and activation. @module */
export * from './activation.ts';
export * from './budgets.ts';
export * from './credentials.ts';
export * from './scopes.ts';
export * from './tokens.ts';
