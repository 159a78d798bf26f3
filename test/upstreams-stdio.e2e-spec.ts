/**
 * Local stdio MCP servers (docs/upstreams.md#local-stdio-servers) on both engines, against two
 * published servers nobody here wrote, each run as a child of the service over stdio:
 * `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem` on a
 * temporary folder. Registered by operator commands only (account keys get 403), supervised
 * (a killed process restarts on the next call after its backoff, an idle one stops, app close
 * leaves none), and an operator-wide upstream in every account's catalogue with the owner's secrets.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isAlive } from '../src/common/process-alive';
import { StdioSupervisor } from '../src/upstreams/stdio-supervisor';
import { startTestApp, useTestApp, type SuiteApp, type TestAccount } from './support/app';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { listenHttp } from './support/http-listen';
import { listChanges, listen, type Listening } from './support/mcp-listen';
import { operator } from './support/operator-action';
import { until } from './support/poll';

const MODULES = path.join(__dirname, '..', 'node_modules', '@modelcontextprotocol');
const EVERYTHING = path.join(MODULES, 'server-everything', 'dist', 'index.js');
const FILESYSTEM = path.join(MODULES, 'server-filesystem', 'dist', 'index.js');
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), UPSTREAMS_STDIO: 'true', UPSTREAMS_STDIO_IDLE_SECONDS: '3', UPSTREAMS_STDIO_CONCURRENCY: '2', EGRESS_ALLOW: '127.0.0.1' };

/** The everything server over Streamable HTTP behind a loopback proxy that notes each request's Authorization header. */
async function startRemote(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await until('server-everything listening', async () => (said.includes('listening on port') ? true : undefined), 20_000);
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(req.headers.authorization ?? '(none)');
    const forwarded = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${port}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  const listening = await listenHttp(proxy);
  return {
    url: `${listening.url}/mcp`,
    seen,
    close: async () => {
      await listening.close();
      child.kill();
    },
  };
}

describeEachEngine('stdio upstreams', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  let folder: string;
  let remote: Awaited<ReturnType<typeof startRemote>>;
  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'tos-stdio-fs-'));
    writeFileSync(path.join(folder, 'notes.txt'), 'hello from the temp folder\n');
    remote = await startRemote();
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    mcpUrl = `${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`;
  });
  const open: Listening[] = [];
  let mcpUrl: string;
  afterAll(async () => {
    for (const stream of open) stream.close();
    rmSync(folder, { recursive: true, force: true });
    await remote?.close();
  });

  let accounts = 0;
  const account = async () => {
    const created = await suite.t.createAccount(`stdio-${++accounts}`);
    return { ...created, name: `stdio-${accounts}` };
  };
  const invoke = (key: string, toolId: string, payload: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload });
  const mcp = (key: string, message: object) =>
    suite.t.request({ method: 'POST', url: '/v1/mcp', key, payload: { jsonrpc: '2.0', id: 1, ...message }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
  const restIds = async (key: string) => (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key })).json().tools.map((tool: { id: string }) => tool.id) as string[];
  const supervisor = () => suite.t.app.get(StdioSupervisor);
  const addStdio = (owner: { name: string }, args: Record<string, unknown>) => operator(suite, 'upstreams.add', { account: owner.name, transport: 'stdio', ...args });

  it('runs the filesystem server on a temp folder: list and read through REST and MCP, a path outside refused by the server', async () => {
    const owner = await account();
    const added = await addStdio(owner, { name: 'files', command: process.execPath, args: [FILESYSTEM, folder] });
    expect(added.status).toBe(200);
    const upstream = added.body.result;
    expect(upstream).toMatchObject({ name: 'files', transport: 'stdio', registered_by: 'operator', shared: false, stdio: { command: process.execPath, args: [FILESYSTEM, folder] }, status: { last_error: null } });
    expect(upstream.tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));
    expect(await restIds(owner.key)).toEqual(expect.arrayContaining(['files.read_text_file', 'files.list_directory']));

    const listed = await invoke(owner.key, 'files.list_directory', { path: folder });
    expect(listed.json()).toMatchObject({ status: 'success', result: { content: expect.stringContaining('[FILE] notes.txt') } });
    const read = (await mcp(owner.key, { method: 'tools/call', params: { name: 'files.read_text_file', arguments: { path: path.join(folder, 'notes.txt') } } })).json().result;
    expect(read.isError).toBeFalsy();
    expect(JSON.stringify(read)).toContain('hello from the temp folder');

    const outside = await invoke(owner.key, 'files.read_text_file', { path: '/etc/hostname' });
    expect(outside.json()).toMatchObject({ status: 'error', error: { message: expect.stringMatching(/Access denied|outside allowed/i) } });

    // Another account neither sees nor calls it; the owner's key cannot change or remove it.
    const stranger = await account();
    expect(await restIds(stranger.key)).not.toContain('files.read_text_file');
    expect((await invoke(stranger.key, 'files.list_directory', { path: folder })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).statusCode).toBe(403);
    expect((await suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${upstream.id}`, key: owner.key, payload: { enabled: false } })).statusCode).toBe(403);

    expect((await operator(suite, 'upstreams.remove', { account: owner.name, name: 'files' })).status).toBe(200);
    expect(supervisor().pidOf(upstream.id)).toBeNull();
    await until('tools gone', async () => (!(await restIds(owner.key)).includes('files.list_directory') ? true : undefined), 5_000);
  });

  it('runs the everything server over stdio with a secret in its environment, never echoed; calls queue past the concurrency limit', async () => {
    const owner = await account();
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/EVERYTHING_SECRET', key: owner.key, payload: { value: 'stdio-very-secret-value' } })).statusCode).toBeLessThan(300);
    const added = await addStdio(owner, { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], env_from_secrets: { EVERYTHING_TOKEN: 'EVERYTHING_SECRET' } });
    expect(added.status).toBe(200);
    expect(added.body.result.stdio.env_from_secrets).toEqual({ EVERYTHING_TOKEN: 'EVERYTHING_SECRET' });
    expect(JSON.stringify(added.body)).not.toContain('stdio-very-secret-value');

    expect((await invoke(owner.key, 'everything.get-sum', { a: 2, b: 40 })).json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: expect.stringContaining('42') }] } });
    const env = (await invoke(owner.key, 'everything.get-env', {})).json();
    expect(env.status).toBe('success');
    // The child has the secret it was given and none of the service's own environment.
    expect(JSON.stringify(env.result)).toContain('EVERYTHING_TOKEN');
    expect(JSON.stringify(env.result)).not.toContain('SECRETS_KEY');
    expect(JSON.stringify(env.result)).not.toContain('DATABASE_URL');

    // Five calls of 1 s on a limit of 2: all succeed, and they cannot all have run at once.
    const started = Date.now();
    const calls = await Promise.all(Array.from({ length: 5 }, () => invoke(owner.key, 'everything.trigger-long-running-operation', { duration: 1, steps: 1 })));
    expect(calls.map((call) => call.json().status)).toEqual(Array(5).fill('success'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);

    // Two long calls fill both slots; cancelled mid-way, they free them: the next call runs at once, not after 60 s.
    const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: owner.key })).json();
    const longs = await Promise.all([1, 2].map(async () => (await invoke(owner.key, 'everything.trigger-long-running-operation', { duration: 60, steps: 60 }, '?async=true')).json().execution_id as string));
    await until('both long calls run', async () => ((await Promise.all(longs.map(execution))).every((row) => row.status === 'running') ? true : undefined));
    for (const id of longs) expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: owner.key })).statusCode).toBeLessThan(300);
    await until('both cancelled', async () => ((await Promise.all(longs.map(execution))).every((row) => row.status === 'cancelled') ? true : undefined), 10_000);
    const freed = Date.now();
    expect((await invoke(owner.key, 'everything.get-sum', { a: 1, b: 1 })).json().status).toBe('success');
    expect(Date.now() - freed).toBeLessThan(5_000);
  }, 60_000);

  it('restarts a killed process on the next call, after a backoff; stops an idle one', async () => {
    const owner = await account();
    const upstream = (await addStdio(owner, { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] })).body.result;
    expect((await invoke(owner.key, 'everything.echo', { message: 'one' })).json().status).toBe('success');
    const first = supervisor().pidOf(upstream.id)!;
    expect(first).toBeGreaterThan(0);

    process.kill(first, 'SIGKILL');
    await until('the killed process is gone', async () => (!isAlive(first) ? true : undefined), 5_000);
    await until('the supervisor saw it end', async () => (supervisor().pidOf(upstream.id) === null ? true : undefined), 5_000);
    const before = Date.now();
    const again = await invoke(owner.key, 'everything.echo', { message: 'two' });
    expect(again.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: expect.stringContaining('two') }] } });
    // The first restart after a crash waits 1 s (docs/upstreams.md#supervision).
    expect(Date.now() - before).toBeGreaterThanOrEqual(800);
    const second = supervisor().pidOf(upstream.id)!;
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);

    // Idle for UPSTREAMS_STDIO_IDLE_SECONDS (3 s here): stopped, and started again by the next call.
    await until('stopped when idle', async () => (supervisor().pidOf(upstream.id) === null && !isAlive(second) ? true : undefined), 10_000, 100);
    expect((await invoke(owner.key, 'everything.echo', { message: 'three' })).json().status).toBe('success');
    expect(supervisor().pidOf(upstream.id)).not.toBeNull();
  }, 60_000);

  it('an operator-wide upstream is in every account’s catalogue, called with its owner’s secrets', async () => {
    const operatorAccount = await account();
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/FS_TOKEN', key: operatorAccount.key, payload: { value: 'owner-held-token' } })).statusCode).toBeLessThan(300);
    const user = await account(); // holds no FS_TOKEN: the owner's is used
    const heard = await listen(mcpUrl, user.key, { toolsListChanged: true }, open);
    const shared = await addStdio(operatorAccount, { name: 'sharedfs', shared: true, command: process.execPath, args: [FILESYSTEM, folder], env_from_secrets: { FS_TOKEN: 'FS_TOKEN' } });
    expect(shared.status).toBe(200);
    expect(shared.body.result).toMatchObject({ shared: true, status: { last_error: null } });

    await until('shared tools listed', async () => ((await restIds(user.key)).includes('sharedfs.list_directory') ? true : undefined), 5_000);
    // Another account's listen stream hears the change (the operator registered it after the stream opened).
    await until('tools/list_changed heard by another account', async () => (listChanges(heard).length > 0 ? true : undefined), 5_000);
    heard.close();
    expect((await invoke(user.key, 'sharedfs.list_directory', { path: folder })).json()).toMatchObject({ status: 'success', result: { content: expect.stringContaining('notes.txt') } });
    const overMcp = (await mcp(user.key, { method: 'tools/call', params: { name: 'sharedfs.read_text_file', arguments: { path: path.join(folder, 'notes.txt') } } })).json().result;
    expect(overMcp.isError).toBeFalsy();
    expect(JSON.stringify(overMcp)).toContain('hello from the temp folder');
    // Not the user's to see as a registration, nor to change.
    expect((await suite.t.request({ method: 'GET', url: `/v1/upstreams/${shared.body.result.id}`, key: user.key })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/v1/upstreams', key: user.key })).json().upstreams).toEqual([]);
    // A second shared upstream of the name conflicts.
    expect((await addStdio(user, { name: 'sharedfs', shared: true, command: process.execPath, args: [FILESYSTEM, folder] })).status).toBe(409);
    expect((await operator(suite, 'upstreams.remove', { account: operatorAccount.name, name: 'sharedfs' })).status).toBe(200);
    await until('shared tools gone', async () => (!(await restIds(user.key)).includes('sharedfs.list_directory') ? true : undefined), 5_000);
  }, 60_000);

  it('an operator-wide Streamable HTTP upstream sends its owner’s bearer secret, whichever account calls', async () => {
    const operatorAccount = await account();
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/REMOTE_TOKEN', key: operatorAccount.key, payload: { value: 'owner-bearer' } })).statusCode).toBeLessThan(300);
    const shared = await operator(suite, 'upstreams.add', { account: operatorAccount.name, name: 'remote', shared: true, transport: 'streamable-http', url: remote.url, auth: { bearer_secret_name: 'REMOTE_TOKEN' } });
    expect(shared.status).toBe(200);
    expect(shared.body.result).toMatchObject({ shared: true, transport: 'streamable-http', status: { last_error: null } });

    // The caller holds a REMOTE_TOKEN of its own: it is never the one sent.
    const user = await account();
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/REMOTE_TOKEN', key: user.key, payload: { value: 'caller-bearer' } })).statusCode).toBeLessThan(300);
    remote.seen.length = 0;
    expect((await invoke(user.key, 'remote.get-sum', { a: 20, b: 22 })).json()).toMatchObject({ status: 'success', result: { content: [{ text: expect.stringContaining('42') }] } });
    expect(remote.seen.length).toBeGreaterThan(0);
    expect(new Set(remote.seen)).toEqual(new Set(['Bearer owner-bearer']));
    expect((await operator(suite, 'upstreams.remove', { account: operatorAccount.name, name: 'remote' })).status).toBe(200);

    // The audit log: its registration and removal are the operator's, on the operator endpoint alone;
    // the call is the caller's, in the caller's log; no secret value anywhere.
    const sharedId = shared.body.result.id;
    const operatorWide = (await operator(suite, 'upstreams.audit', { upstream: sharedId })).body.result;
    expect(operatorWide.map((event: { action: string }) => event.action)).toEqual(['upstream.deleted', 'upstream.created']);
    expect(operatorWide[1]).toMatchObject({ actor: 'operator', account_id: null, details: { shared: true, auth: { bearer_secret_name: 'REMOTE_TOKEN' } } });
    const userLog = (await suite.t.request({ method: 'GET', url: '/v1/upstreams/audit', key: user.key })).json();
    expect(userLog).toMatchObject({ total: 1, events: [{ action: 'upstream.called', upstream_id: sharedId, account_id: user.id, details: { tool_id: 'remote.get-sum', outcome: 'ok' } }] });
    expect((await suite.t.request({ method: 'GET', url: '/v1/upstreams/audit', key: operatorAccount.key })).json().total).toBe(0);
    expect((await operator(suite, 'upstreams.audit', { account: user.name, action: 'upstream.called' })).body.result).toHaveLength(1);
    expect(JSON.stringify([operatorWide, userLog])).not.toMatch(/owner-bearer|caller-bearer/);
    const refused = await operator(suite, 'upstreams.audit', { action: 'upstream.exploded' });
    expect(refused).toMatchObject({ status: 400, body: { error: { details: { parameter: 'action' } } } });
  }, 60_000);

  it('refuses stdio from account keys (403) and bad operator arguments (400)', async () => {
    const owner = await account();
    const byKey = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { name: 'mine', transport: 'stdio', url: 'x', auth: { none: true } } });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error).toMatchObject({ code: 'FORBIDDEN', details: { parameter: 'transport' } });
    for (const [args, parameter] of [
      [{ name: 'x', command: '' }, 'command'],
      [{ name: 'x' }, 'command'],
      [{ name: 'x', command: 'node', image: 'alpine' }, 'image'],
      [{ name: 'x', command: 'node', cwd: 'relative/dir' }, 'cwd'],
      [{ name: 'x', command: 'node', args: 'not-a-list' }, 'args'],
      [{ name: 'x', command: 'node', env_from_secrets: { 'BAD-NAME': 'S' } }, 'env_from_secrets.BAD-NAME'],
      [{ name: 'x', image: '--privileged' }, 'image'],
      [{ name: 'Bad', command: 'node' }, 'name'],
    ] as const) {
      const res = await addStdio(owner, args);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter } });
    }
    // Images need the engine they run on (test/upstreams-stdio-container.e2e-spec.ts runs them).
    const image = await addStdio(owner, { name: 'boxed', image: 'mcp/everything:1' });
    expect(image.status).toBe(403);
    expect(image.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('UPSTREAMS_STDIO_DOCKER_HOST'), details: { parameter: 'image' } });
    // A command that is not there: registered with its error shown, fixed by removing and adding.
    const missing = await addStdio(owner, { name: 'missing', command: '/nonexistent/mcp-server' });
    expect(missing.status).toBe(200);
    expect(missing.body.result.status.last_error).toMatch(/could not be started/);
  });

  it('tos upstreams add|rm --account registers and removes one (embedded: through the operator endpoint; with DATABASE_URL: on the database)', async () => {
    const owner = await account();
    const tos = (...args: string[]) => promisify(execFile)(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args], { env: { PATH: process.env.PATH!, LOG_LEVEL: 'error', ...suite.env, TOS_URL: '', TOS_API_KEY: '' } });
    const added = await tos('upstreams', 'add', 'clifiles', '--account', owner.name, '--output', 'json', '--stdio', '--', process.execPath, FILESYSTEM, folder);
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'clifiles', transport: 'stdio', registered_by: 'operator', status: { last_error: null } });
    await until('its tools listed', async () => ((await restIds(owner.key)).includes('clifiles.list_directory') ? true : undefined), 5_000);
    expect((await invoke(owner.key, 'clifiles.list_directory', { path: folder })).json()).toMatchObject({ status: 'success', result: { content: expect.stringContaining('notes.txt') } });
    await tos('upstreams', 'rm', 'clifiles', '--account', owner.name);
    await until('its tools gone', async () => (!(await restIds(owner.key)).includes('clifiles.list_directory') ? true : undefined), 5_000);
  }, 120_000);

  it('app close stops every child it started', async () => {
    const owner = await account();
    const upstream = (await addStdio(owner, { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] })).body.result;
    expect((await invoke(owner.key, 'everything.echo', { message: 'x' })).json().status).toBe('success');
    const pid = supervisor().pidOf(upstream.id)!;
    expect(isAlive(pid)).toBe(true);
    await suite.t.close();
    expect(isAlive(pid)).toBe(false);
    // The suite's own afterAll closes an app: a fresh one on the same database.
    suite.t = await startTestApp({ env: suite.env });
  }, 60_000);
});

describe('stdio upstreams switched off [embedded]', () => {
  const suite = useTestApp(ENGINE_MODES[0], { env: { SECRETS_KEY: ENV.SECRETS_KEY } });

  it('refuses the operator’s stdio registration with 403 naming UPSTREAMS_STDIO, and account keys with 403', async () => {
    const refused = await operator(suite, 'upstreams.add', { account: 'acme', name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('UPSTREAMS_STDIO=true') });
    expect((await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: suite.acme.key, payload: { name: 'mine', transport: 'stdio', auth: { none: true }, url: 'x' } })).statusCode).toBe(403);
    expect((await suite.t.request({ method: 'GET', url: '/v1/upstreams', key: suite.acme.key })).json().upstreams).toEqual([]);
  });
});
