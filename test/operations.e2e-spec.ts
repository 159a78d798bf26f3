/**
 * Operator paths: bootstrap key, persistence across restarts, the `tos` CLI, and boot failures.
 */
import { Module } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Tool, ToolHandler } from '@tos/sdk';
import { releaseDataDir } from '../src/database/data-dir-lock';
import { describeEachDatabase } from './support/databases';
import { startTestApp } from './support/app';
import { freePort } from './support/free-port';
import { startServiceProcess } from './support/processes';

const run = promisify(execFile);
const BOOTSTRAP_KEY = `sk_svc_${'B'.repeat(32)}`;
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');

/** Operator commands print tables; these tests read their JSON. */
function cli(env: Record<string, string>, ...args: string[]) {
  return run(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args, '--json'], {
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
    timeout: 60_000,
  });
}

describeEachDatabase('operations', (mode) => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ env, cleanup } = await mode.prepare());
  });
  afterAll(() => cleanup());

  it('BOOTSTRAP_API_KEY seeds account default once; data survives a restart', async () => {
    const first = await startTestApp({ env: { ...env, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, BOOTSTRAP_TIER: 'pro' } });
    const created = await first.request({ method: 'POST', url: '/v1/keys', key: BOOTSTRAP_KEY, payload: { name: 'made-before-restart', type: 'user' } });
    expect(created.statusCode).toBe(201);
    await first.close();
    if (env.DATA_DIR) releaseDataDir(env.DATA_DIR);

    const second = await startTestApp({ env: { ...env, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY } });
    try {
      const keys = (await second.request({ method: 'GET', url: '/v1/keys', key: BOOTSTRAP_KEY })).json();
      expect(keys.keys.map((k: { name: string }) => k.name).sort()).toEqual(['bootstrap', 'made-before-restart']);
      expect((await second.request({ method: 'GET', url: '/v1/tools', key: created.json().key })).statusCode).toBe(200);
    } finally {
      await second.close();
      if (env.DATA_DIR) releaseDataDir(env.DATA_DIR);
    }
  });

  it('the tos CLI creates accounts and keys that the service accepts', async () => {
    const account = JSON.parse((await cli(env, 'accounts', 'create', '--name', 'cli-co', '--tier', 'enterprise', '--requests-per-minute', '50000')).stdout);
    expect(account).toMatchObject({ name: 'cli-co', tier: 'enterprise', requests_per_minute: 50000 });
    const key = JSON.parse((await cli(env, 'keys', 'create', '--account', 'cli-co', '--name', 'ops', '--type', 'svc')).stdout);
    expect(key.key).toMatch(/^sk_svc_[0-9A-Za-z]{32}$/);
    const listed = JSON.parse((await cli(env, 'keys', 'list', '--account', 'cli-co')).stdout);
    expect(listed).toHaveLength(1);
    expect(JSON.parse((await cli(env, 'accounts', 'list')).stdout).map((a: { name: string }) => a.name)).toContain('cli-co');
    expect(JSON.stringify(listed)).not.toContain(key.key);
    await expect(cli(env, 'accounts', 'create', '--name', 'cheap', '--tier', 'free', '--requests-per-minute', '5')).rejects.toMatchObject({
      stderr: expect.stringContaining('custom limits are for enterprise accounts'),
    });
    await expect(cli(env, 'keys', 'create', '--account', 'nobody', '--name', 'x')).rejects.toMatchObject({ stderr: expect.stringContaining('Account not found: nobody') });
    // The service refuses a tool that does not exist, whichever door creates the key.
    await expect(cli(env, 'keys', 'create', '--account', 'cli-co', '--name', 'narrow', '--tool-ids', 'json-transform,no-such-tool')).rejects.toMatchObject({
      stderr: expect.stringContaining('Unknown tool in tool_ids: no-such-tool'),
    });
    const narrow = JSON.parse((await cli(env, 'keys', 'create', '--account', 'cli-co', '--name', 'narrow', '--tool-ids', 'json-transform')).stdout);
    expect(narrow.tool_ids).toEqual(['json-transform']);

    const t = await startTestApp({ env });
    try {
      expect((await t.request({ method: 'GET', url: '/v1/tools', key: key.key })).statusCode).toBe(200);
      // With the service running: in embedded mode through its operator endpoint, with PostgreSQL directly.
      expect(JSON.parse((await cli(env, 'keys', 'revoke', key.id, '--account', 'cli-co')).stdout)).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
      // In the same process the revocation clears the verified-key cache at once (PostgreSQL without Redis waits for its TTL).
      if (env.DATA_DIR) expect((await t.request({ method: 'GET', url: '/v1/tools', key: key.key })).statusCode).toBe(401);
    } finally {
      await t.close();
      if (env.DATA_DIR) releaseDataDir(env.DATA_DIR);
    }
  }, 240_000); // eight CLI runs, each booting the service's modules under ts-node
});

describe('operator commands', () => {
  it('tos accounts list, which runs no tool, leaves WORKSPACE_ROOT alone', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tos-cli-'));
    try {
      const workspaceRoot = path.join(dir, 'workspace');
      expect(JSON.parse((await cli({ DATA_DIR: path.join(dir, 'data'), WORKSPACE_ROOT: workspaceRoot }, 'accounts', 'list')).stdout)).toEqual([]);
      expect(existsSync(workspaceRoot)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('boot', () => {
  it('a second process on the same data directory says so in one line; SIGTERM is logged', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-boot-'));
    const env = { DATA_DIR: dataDir, HOST: '127.0.0.1' };
    try {
      const first = await startServiceProcess('all', { ...env, PORT: String(await freePort()) });
      const second = await startServiceProcess('all', { ...env, PORT: String(await freePort()) }).catch((error: Error) => error.message);
      expect(second).toMatch(/exited with 1 before it was ready:\nDATA_DIR .* is in use by process \d+: stop it first[^\n]*\n?$/);
      first.child.kill('SIGTERM');
      expect([0, 'SIGTERM']).toContain(await first.exited); // Nest re-raises the signal once it has closed
      expect(first.output()).toContain('SIGTERM: shutting down');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses an extension module whose tool id duplicates a built-in one', async () => {
    @Tool({
      id: 'json-transform',
      name: 'Impostor',
      category: 'automation',
      description: 'Collides with a built-in tool.',
      version: '1.0.0',
      input: { type: 'object', properties: {} },
      output: { type: 'object', properties: { ok: { type: 'boolean', description: 'ok' } }, required: ['ok'] },
      examples: [{ name: 'x', input: {}, output: { ok: true } }],
    })
    class ImpostorTool implements ToolHandler {
      async execute() {
        return { ok: true };
      }
    }
    @Module({ providers: [ImpostorTool] })
    class ImpostorModule {}
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-boot-'));
    try {
      await expect(startTestApp({ extensions: [ImpostorModule], env: { DATA_DIR: dataDir } })).rejects.toThrow(/Duplicate tool id 'json-transform'.*ImpostorTool/);
    } finally {
      releaseDataDir(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
