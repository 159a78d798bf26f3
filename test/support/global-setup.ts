/**
 * Jest globalSetup of the e2e project: starts the throwaway servers the whole run shares and
 * publishes each URL in process.env, which the test workers (spawned afterwards) inherit.
 * A service whose binaries are missing is skipped with a loud notice, or fails the run under CI=true.
 */
import { findPostgresBinaries, startPostgres } from './postgres-server';
import { findRedisServer, startRedis } from './redis-server';

export const POSTGRES_URL_ENV = 'TOS_TEST_POSTGRES_URL';
export const REDIS_URL_ENV = 'TOS_TEST_REDIS_URL';

interface TestService {
  name: string;
  /** The variable that carries the service URL to the tests. */
  env: string;
  /** Why the service cannot run on this machine, or null when it can. */
  unavailable(): string | null;
  start(): Promise<{ url: string; stop(): Promise<void> }>;
}

const SERVICES: TestService[] = [
  {
    name: 'PostgreSQL',
    env: POSTGRES_URL_ENV,
    unavailable: () =>
      findPostgresBinaries() ? null : 'initdb/postgres not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)',
    start: startPostgres,
  },
  {
    name: 'Redis',
    env: REDIS_URL_ENV,
    unavailable: () => (findRedisServer() ? null : 'redis-server not found on PATH'),
    start: startRedis,
  },
];

/** Running services, kept on globalThis: the only state Jest shares between globalSetup and globalTeardown. */
export interface RunningService {
  name: string;
  stop(): Promise<void>;
}
const RUNNING_KEY = '__tosTestServices';
export const runningServices = (): RunningService[] =>
  ((globalThis as Record<string, unknown>)[RUNNING_KEY] ??= []) as RunningService[];

export default async function globalSetup(): Promise<void> {
  const running = runningServices();
  try {
    for (const service of SERVICES) {
      const reason = service.unavailable();
      if (reason) {
        const notice = `${service.name} is unavailable: ${reason}`;
        if (process.env.CI === 'true') throw new Error(`${notice} (CI=true: suites that need it cannot be skipped)`);
        console.warn(`\n!!! ${notice}\n!!! e2e suites that need ${service.name} will be SKIPPED.\n`);
        continue;
      }
      const { url, stop } = await service.start();
      running.push({ name: service.name, stop });
      process.env[service.env] = url;
    }
  } catch (error) {
    // Jest skips globalTeardown when globalSetup fails: stop what already started.
    await Promise.allSettled(running.splice(0).map((service) => service.stop()));
    throw error;
  }
}
