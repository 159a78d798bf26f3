export * from './accounts';
export * from './actions';
export type { ForgeUrls } from './common';
export * from './pull-requests';
