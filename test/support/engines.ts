import { randomBytes } from 'node:crypto';
import { DATABASE_MODES } from './databases';
import { REDIS_URL_ENV } from './global-setup';

export interface EngineMode {
  name: 'embedded' | 'distributed';
  /** Environment for the app under test: a fresh database, and for distributed a private queue namespace. */
  prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const pglite = DATABASE_MODES.find((m) => m.name === 'pglite')!;
const postgres = DATABASE_MODES.find((m) => m.name === 'postgres')!;

/** The two runtime modes of DESIGN §4: PGlite + in-process executor, PostgreSQL + Bull on Redis. */
export const ENGINE_MODES: EngineMode[] = [
  { name: 'embedded', prepare: () => pglite.prepare() },
  {
    name: 'distributed',
    prepare: async () => {
      const database = await postgres.prepare();
      return { ...database, env: { ...database.env, REDIS_URL: process.env[REDIS_URL_ENV]!, QUEUE_PREFIX: `t${randomBytes(5).toString('hex')}` } };
    },
  },
];

export function distributedAvailable(): boolean {
  return postgres.available() && !!process.env[REDIS_URL_ENV];
}

/**
 * `describe(name [mode])` per engine mode. Without PostgreSQL or Redis the distributed variant is
 * skipped loudly, except under CI=true, where that is a failure.
 */
export function describeEachEngine(name: string, fn: (mode: EngineMode) => void): void {
  for (const mode of ENGINE_MODES) {
    const title = `${name} [${mode.name}]`;
    if (mode.name === 'embedded' || distributedAvailable()) {
      describe(title, () => fn(mode));
      continue;
    }
    const notice = `"${title}" needs PostgreSQL and Redis from the e2e global setup, which are unavailable`;
    if (process.env.CI === 'true') throw new Error(`${notice}; CI=true forbids skipping it`);
    console.warn(`\n!!! SKIPPED: ${notice}\n`);
    describe.skip(title, () => fn(mode));
  }
}
