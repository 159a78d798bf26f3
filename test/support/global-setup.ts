/**
 * Jest globalSetup of the e2e project: starts the throwaway servers the whole run shares and
 * publishes each URL in process.env, which the test workers (spawned afterwards) inherit.
 * A service whose binaries are missing fails the run at once, naming the package to install: the
 * suites never skip (npm test's set-up, test/setup.sh, installs them all).
 */
import { findDnsmasq, startExampleWorld } from './example-world/world';
import { findPostgresBinaries, startPostgres } from './postgres-server';
import { missingPrerequisite } from './prerequisites';
import { findRedisServer, startRedis } from './redis-server';

export const POSTGRES_URL_ENV = 'TOS_TEST_POSTGRES_URL';
export const REDIS_URL_ENV = 'TOS_TEST_REDIS_URL';
/** JSON of the service settings that make every tool example run (see example-world/world.ts). */
export const EXAMPLE_WORLD_ENV = 'TOS_TEST_EXAMPLE_ENV';

interface TestService {
  name: string;
  /** Whether its binaries are installed, and the Debian package that installs them. */
  installed(): boolean;
  install: string;
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
    installed: () => !!findPostgresBinaries(),
    install: 'postgresql',
    start: byUrl(POSTGRES_URL_ENV, startPostgres),
  },
  {
    name: 'Redis',
    installed: () => !!findRedisServer(),
    install: 'redis-server',
    start: byUrl(REDIS_URL_ENV, startRedis),
  },
  {
    name: 'The example world (dnsmasq and the tools\' example servers)',
    installed: () => !!findDnsmasq(),
    install: 'dnsmasq-base',
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
  const missing = SERVICES.filter((service) => !service.installed());
  if (missing.length > 0) throw new Error(missingPrerequisite(missing.map((service) => service.name).join(', '), missing.map((service) => service.install).join(' ')));
  const running = runningServices();
  try {
    for (const service of SERVICES) {
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
