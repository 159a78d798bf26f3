import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApp } from '../../src/app.setup';
import { loadConfig } from '../../src/config/app-config';
import { AccountsService } from '../../src/keys/accounts.service';
import { ApiKeysService, NewKey } from '../../src/keys/api-keys.service';
import type { Tier } from '../../src/identity/tiers';

export interface TestAppOptions {
  env?: Record<string, string>;
  extensions?: Array<Type | DynamicModule>;
  withoutBuiltinTools?: boolean;
}

export interface TestAccount {
  id: string;
  /** A service key holding every scope. */
  key: string;
}

export interface TestApp {
  app: NestFastifyApplication;
  workspaceRoot: string;
  request(options: InjectOptions & { key?: string }): Promise<LightMyRequestResponse>;
  createAccount(name: string, tier?: Tier): Promise<TestAccount>;
  createKey(accountId: string, key: NewKey, now?: Date): Promise<string>;
  close(): Promise<void>;
}

/** The real application (same createApp as main.ts) on the given database env, driven with inject(). */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const workspaceRoot = mkdtempSync(path.join(tmpdir(), 'tos-ws-'));
  const config = loadConfig({ LOG_LEVEL: 'silent', WORKSPACE_ROOT: workspaceRoot, ...options.env });
  const app = await createApp({ config, extensions: options.extensions, withoutBuiltinTools: options.withoutBuiltinTools });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const accounts = app.get(AccountsService);
  const keys = app.get(ApiKeysService);

  const createKey = async (accountId: string, key: NewKey, now?: Date) => (await keys.create(accountId, key, undefined, now)).secret;
  return {
    app,
    workspaceRoot,
    request: ({ key, headers, ...rest }) =>
      app.inject({ ...rest, headers: { ...(key && { authorization: `Bearer ${key}` }), ...headers } }),
    createAccount: async (name, tier = 'enterprise') => {
      const account = await accounts.create({ name, tier });
      return { id: account.id, key: await createKey(account.id, { name: `${name}-svc`, type: 'service' }) };
    },
    createKey,
    close: async () => {
      await app.close();
      rmSync(workspaceRoot, { recursive: true, force: true });
    },
  };
}

export interface SuiteApp {
  t: TestApp;
  /** An enterprise account `acme` with a service key. */
  acme: TestAccount;
  /** The environment the app was started with. */
  env: Record<string, string>;
}

/**
 * The usual suite set-up: a fresh database (and queue namespace) from `mode`, the app on it, an
 * account `acme`; all removed after the suite. Fields are filled in by beforeAll.
 */
export function useTestApp(mode: { prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> }, options: TestAppOptions = {}): SuiteApp {
  const suite = {} as SuiteApp;
  let cleanup: (() => Promise<void>) | undefined;
  let failure: Error | undefined;
  beforeAll(async () => {
    try {
      const prepared = await mode.prepare();
      cleanup = prepared.cleanup;
      suite.env = { ...prepared.env, ...options.env };
      suite.t = await startTestApp({ ...options, env: suite.env });
      suite.acme = await suite.t.createAccount('acme');
    } catch (error) {
      failure = error as Error;
      throw error;
    }
  });
  afterAll(async () => {
    await suite.t?.close();
    await cleanup?.();
  });
  // After a failed set-up, what the tests read fails with its reason, not a TypeError on undefined.
  return new Proxy(suite, {
    get: (target, key) => {
      if (failure && !Reflect.has(target, key)) throw new Error(`This suite's set-up failed: ${failure.message}`);
      return Reflect.get(target, key);
    },
  });
}
