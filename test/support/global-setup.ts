/**
 * Jest globalSetup of the e2e project: starts the throwaway servers the whole run shares and
 * publishes each URL in process.env, which the test workers (spawned afterwards) inherit.
 * A service whose binaries are missing is skipped with a loud notice, or fails the run under CI=true.
 */
import { findDnsmasq, startExampleWorld } from './example-world/world';
import { findPostgresBinaries, startPostgres } from './postgres-server';
import { findRedisServer, startRedis } from './redis-server';

export const POSTGRES_URL_ENV = 'TOS_TEST_POSTGRES_URL';
export const REDIS_URL_ENV = 'TOS_TEST_REDIS_URL';
/** JSON of the service settings that make every tool example run (see example-world/world.ts). */
export const EXAMPLE_WORLD_ENV = 'TOS_TEST_EXAMPLE_ENV';

interface TestService {
  name: string;
  /** Why the service cannot run on this machine, or null when it can. */
  unavailable(): string | null;
  /** Starts it; `env` is published to the test workers. */
  start(): Promise<{ env: Record<string, string>; stop(): Promise<void> }>;
}

/** A server whose URL is published in one variable. */
const byUrl = (env: string, start: () => Promise<{ url: string; stop(): Promise<void> }>) => async () => {
  const { url, stop } = await start();
  return { env: { [env]: url }, stop };
};

const SERVICES: TestService[] = [
  {
    name: 'PostgreSQL',
    unavailable: () =>
      findPostgresBinaries() ? null : 'initdb/postgres not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)',
    start: byUrl(POSTGRES_URL_ENV, startPostgres),
  },
  {
    name: 'Redis',
    unavailable: () => (findRedisServer() ? null : 'redis-server not found on PATH'),
    start: byUrl(REDIS_URL_ENV, startRedis),
  },
  {
    name: 'The example world (dnsmasq and the tools\' example servers)',
    unavailable: () => (findDnsmasq() ? null : 'dnsmasq not found (apt-get install dnsmasq-base)'),
    start: async () => {
      const { env, stop } = await startExampleWorld();
      return { env: { [EXAMPLE_WORLD_ENV]: JSON.stringify(env) }, stop };
    },
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
      const { env, stop } = await service.start();
      running.push({ name: service.name, stop });
      Object.assign(process.env, env);
    }
  } catch (error) {
    // Jest skips globalTeardown when globalSetup fails: stop what already started.
    await Promise.allSettled(running.splice(0).map((service) => service.stop()));
    throw error;
  }
}
