import { randomBytes } from 'node:crypto';
import { DATABASE_MODES } from './databases';
import { REDIS_URL_ENV } from './global-setup';
import { published } from './prerequisites';

export interface EngineMode {
  name: 'embedded' | 'distributed';
  /** Environment for the app under test: a fresh database, and for distributed a private queue namespace. */
  prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const pglite = DATABASE_MODES.find((m) => m.name === 'pglite')!;
const postgres = DATABASE_MODES.find((m) => m.name === 'postgres')!;

/** The two runtime modes (docs/ARCHITECTURE.md#api-and-worker-roles): PGlite + in-process executor, PostgreSQL + Bull on Redis. */
/** The URL of the Redis server the e2e global setup started. */
export const redisUrl = (): string => published(REDIS_URL_ENV, 'Redis');

export const ENGINE_MODES: EngineMode[] = [
  { name: 'embedded', prepare: () => pglite.prepare() },
  {
    name: 'distributed',
    prepare: async () => {
      const database = await postgres.prepare();
      return { ...database, env: { ...database.env, REDIS_URL: redisUrl(), QUEUE_PREFIX: `t${randomBytes(5).toString('hex')}` } };
    },
  },
];

/** `describe(name [mode])` per engine mode (the e2e global setup starts PostgreSQL and Redis, or fails the run). */
export function describeEachEngine(name: string, fn: (mode: EngineMode) => void): void {
  for (const mode of ENGINE_MODES) describe(`${name} [${mode.name}]`, () => fn(mode));
}
