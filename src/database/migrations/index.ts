import { Initial1763780000000 } from './1763780000000-Initial';

/** In order; listed explicitly so the same array serves ts-node, Jest and the compiled build. */
export const MIGRATIONS: Function[] = [Initial1763780000000];
