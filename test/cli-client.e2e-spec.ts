/**
 * `tos` as a client: the CLI spawned as a subprocess against the real service listening on
 * loopback (embedded engine), over HTTP with TOS_URL and TOS_API_KEY.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { useTestApp } from './support/app';
import { until } from './support/poll';
import { exportOf, startExportServer } from './support/osv-exports';
import { missingPrerequisite } from './support/prerequisites';
import { ENGINE_MODES } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';
import { startRecordingServer } from './support/recording-server';
import { startPetsApi } from './support/openapi-pets';
import { arrived, verified } from './support/webhook-receiver';
import { readOperatorFile } from '../src/operator/operator-file';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const REPORT_LOADED_PACKAGES = path.join(__dirname, 'support', 'report-loaded-packages.ts');
const embedded = ENGINE_MODES.find((m) => m.name === 'embedded')!;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('tos client commands', () => {
  // Webhooks to a loopback receiver: the egress policy lets 127.0.0.1 through, and sends are polled for often.
  const suite = useTestApp(embedded, { extensions: [TestToolsModule], env: { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', WEBHOOK_POLL_MS: '50' } });
  let url: string;

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = (await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  const tos = async (args: string[], env: Record<string, string> = {}, stdin = ''): Promise<CliResult> => {
    try {
      const running = run(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args], {
        env: { PATH: process.env.PATH!, TOS_URL: url, TOS_API_KEY: suite.acme.key, ...env },
      });
      running.child.stdin!.end(stdin);
      const { stdout, stderr } = await running;
      return { code: 0, stdout, stderr };
    } catch (err) {
      const failed = err as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  const json = async (args: string[], env?: Record<string, string>, stdin?: string) => {
    const result = await tos([...args, '--output', 'json'], env, stdin);
    return { ...result, body: JSON.parse(result.stdout) };
  };

  it('tools list and show', async () => {
    const list = await json(['tools', 'list']);
    expect(list.code).toBe(0);
    expect(JSON.stringify(list.body)).toContain('test-sleep');
    const show = await json(['tools', 'show', 'test-sleep']);
    expect(show).toMatchObject({ code: 0, body: { id: 'test-sleep' } });
  });

  it('workflows apply (create, then a new version), list, show, run, runs and cancel', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tos-workflows-'));
    try {
      const file = path.join(dir, 'double.yaml');
      const document = (expression: string) => ['name: cli-double', 'inputs:', '  n: { type: integer, required: true }', 'steps:', '  - id: twice', '    tool: json-transform', '    inputs:', `      expression: '${expression}'`, "      data: '${{ inputs.n }}'", 'outputs:', "  value: '${{ steps.twice.result.result }}'", ''].join('\n');
      writeFileSync(file, document('$ * 2'));
      expect(await json(['workflows', 'apply', '-f', file])).toMatchObject({ code: 0, body: { name: 'cli-double', version: 1 } });
      writeFileSync(file, document('$ * 3'));
      expect(await json(['workflows', 'apply', '-f', file])).toMatchObject({ code: 0, body: { name: 'cli-double', version: 2 } });
      expect((await json(['workflows', 'list'])).body).toEqual([expect.objectContaining({ name: 'cli-double', version: 2 })]);
      expect((await json(['workflows', 'show', 'cli-double'])).body.document.steps[0].inputs.expression).toBe('$ * 3');
      const ran = await json(['workflows', 'run', 'cli-double', '--input', '{"n":5}']);
      expect(ran).toMatchObject({ code: 0, body: { status: 'success', result: { value: 15 } } });
      expect((await json(['workflows', 'runs', 'cli-double'])).body).toEqual([expect.objectContaining({ id: ran.body.execution_id, tool_id: 'workflow.cli-double', status: 'success' })]);
      const cancelled = await tos(['workflows', 'cancel', ran.body.execution_id]);
      expect(cancelled.code).toBe(1); // it has ended: 409
      expect(cancelled.stderr).toMatch(/CONFLICT/);
      const missing = await tos(['workflows', 'run', 'no-such-workflow']);
      expect(missing.stderr).toMatch(/No workflow named 'no-such-workflow'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a client command loads neither the operator runtime (Nest, the database) nor the MCP SDK', async () => {
    const { stderr } = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', REPORT_LOADED_PACKAGES, CLI, 'tools', 'list'], {
      env: { PATH: process.env.PATH!, TOS_URL: url, TOS_API_KEY: suite.acme.key },
    });
    const loaded: string[] = JSON.parse(/^loaded-packages: (.*)$/m.exec(stderr)![1]);
    expect(loaded).toContain('commander');
    for (const heavy of ['@nestjs/core', '@nestjs/common', 'typeorm', '@electric-sql/pglite', 'pg', 'class-validator', '@modelcontextprotocol/sdk']) expect(loaded).not.toContain(heavy);
  });

  it('advisories sync works on a directory alone: a line per ecosystem, neither Nest nor the database loaded', async () => {
    const bucket = await startExportServer();
    const dir = mkdtempSync(path.join(tmpdir(), 'tos-advisories-'));
    try {
      bucket.exports.set('/npm/all.zip', { body: await exportOf([['GHSA-cli0-0000-0001', 'minimist', '2026-11-20T08:00:00Z']]), etag: '"e1"' });
      const sync = ['advisories', 'sync', '--dir', dir, '--ecosystems', 'npm', '--source', bucket.url];
      const first = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', REPORT_LOADED_PACKAGES, CLI, ...sync], { env: { PATH: process.env.PATH! } });
      expect(first.stdout).toMatch(/^npm +downloaded +1 +2026-11-20T08:00:00\.000Z/m);
      const loaded: string[] = JSON.parse(/^loaded-packages: (.*)$/m.exec(first.stderr)![1]);
      expect(loaded).toContain('yauzl');
      for (const heavy of ['@nestjs/core', '@nestjs/common', 'typeorm', '@electric-sql/pglite', 'pg', 'class-validator']) expect(loaded).not.toContain(heavy);
      const second = await tos([...sync, '--json']);
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject([{ ecosystem: 'npm', status: 'unchanged', records: 1, data_as_of: '2026-11-20T08:00:00.000Z' }]);
    } finally {
      await bucket.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('invokes synchronously with --set', async () => {
    const result = await json(['invoke', 'test-sleep', '--set', 'ms=0']);
    expect(result).toMatchObject({ code: 0, body: { status: 'success', result: { slept_ms: 0 } } });
  });

  it('invokes --async --wait, following progress as plain lines when not a TTY', async () => {
    const result = await json(['invoke', 'test-sleep', '--input', '{"ms":300}', '--async', '--wait']);
    expect(result).toMatchObject({ code: 0, body: { status: 'success', progress: 100 } });
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe('success 100%');
    expect(lines.filter((line) => /^running \d+% step \d+$/.test(line)).length).toBeGreaterThan(0);
  });

  it('follows an async execution and exits 4 when it is cancelled', async () => {
    const started = await json(['invoke', 'test-sleep', '--set', 'ms=20000', '--async']);
    const id = started.body.execution_id as string;
    const follower = tos(['executions', 'follow', id, '--output', 'json']);
    const cancelled = await json(['executions', 'cancel', id]);
    expect(cancelled.code).toBe(0);
    const followed = await follower;
    expect(followed.code).toBe(4);
    expect(JSON.parse(followed.stdout)).toMatchObject({ id, status: 'cancelled' });
    const shown = await json(['executions', 'show', id]);
    expect(shown.body.status).toBe('cancelled');
  });

  it('exits 3 when the execution fails and 5 when it times out', async () => {
    const failed = await json(['invoke', 'test-misbehave', '--set', 'mode=tool-error', '--async', '--wait']);
    expect(failed).toMatchObject({ code: 3, body: { status: 'error' } });
    const slow = await json(['invoke', 'test-sleep', '--set', 'ms=5000', '--timeout', '1', '--async', '--wait']);
    expect(slow).toMatchObject({ code: 5, body: { status: 'error', error: { code: 'TOOL_TIMEOUT' } } });
    const long = await json(['invoke', 'test-sleep', '--set', 'ms=20000', '--async']);
    expect(long.code).toBe(0);
    const givenUp = await json(['executions', 'follow', long.body.execution_id, '--timeout', '1']);
    expect(givenUp).toMatchObject({ code: 5, body: { error: { code: 'TIMEOUT' } } });
    await json(['executions', 'cancel', long.body.execution_id]);
  });

  it('draws a progress bar under a pseudo-terminal', async () => {
    const command = [process.execPath, '-r', 'ts-node/register/transpile-only', CLI, 'invoke', 'test-sleep', '--set', 'ms=300', '--async', '--wait'].join(' ');
    const { stdout } = await run('script', ['-qfc', command, '/dev/null'], { env: { PATH: process.env.PATH!, TOS_URL: url, TOS_API_KEY: suite.acme.key } });
    expect(stdout).toMatch(/\r\[#{30}\] 100% success/);
    expect(stdout).toMatch(/\r\[#*-+\]\s+\d+% running step \d+/);
  });

  it('keys create, list and revoke without --account go to the API with the caller key', async () => {
    const created = await json(['keys', 'create', '--name', 'cli-made', '--type', 'service', '--scopes', 'tools:read']);
    expect(created).toMatchObject({ code: 0, body: { name: 'cli-made', key: expect.any(String) } });
    const keyId = created.body.id as string;
    const usable = await json(['tools', 'list'], { TOS_API_KEY: created.body.key });
    expect(usable.code).toBe(0);
    const listed = await json(['keys', 'list']);
    expect(JSON.stringify(listed.body)).toContain(keyId);
    expect((await json(['keys', 'revoke', keyId])).code).toBe(0);
    const refused = await json(['tools', 'list'], { TOS_API_KEY: created.body.key });
    expect(refused).toMatchObject({ code: 1, body: { error: { code: expect.any(String) } } });
  });

  it('secrets set (value from stdin), list and delete', async () => {
    const set = await json(['secrets', 'set', 'CLI_TOKEN'], undefined, 's3cr3t-value\n');
    expect(set).toMatchObject({ code: 0 });
    expect(set.stdout).not.toContain('s3cr3t-value');
    const listed = await json(['secrets', 'list']);
    expect(JSON.stringify(listed.body)).toContain('CLI_TOKEN');
    expect((await json(['secrets', 'delete', 'CLI_TOKEN'])).code).toBe(0);
    expect(JSON.stringify((await json(['secrets', 'list'])).body)).not.toContain('CLI_TOKEN');
  });

  it('login saves a profile at mode 0600 that --profile then uses', async () => {
    const configHome = mkdtempSync(path.join(tmpdir(), 'tos-config-'));
    const env = { TOS_URL: '', TOS_API_KEY: '', XDG_CONFIG_HOME: configHome };
    const login = await tos(['--profile', 'work', 'login', '--url', url], env, `${suite.acme.key}\n`);
    expect(login.code).toBe(0);
    const file = path.join(configHome, 'tos', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await json(['--profile', 'work', 'tools', 'show', 'test-sleep'], env)).code).toBe(0);
    expect((await json(['tools', 'list'], env)).code).toBe(2);
    rmSync(configHome, { recursive: true, force: true });
  });

  it("mcp stdio forwards tools/list and tools/call with progress to /v1/mcp, and the host's cancel", async () => {
    const client = new Client({ name: 'cli-e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['-r', 'ts-node/register/transpile-only', CLI, 'mcp', 'stdio'],
        env: { PATH: process.env.PATH!, TOS_URL: url, TOS_API_KEY: suite.acme.key },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('test-sleep');
      // Prompts and resources are the service's own, forwarded as they are.
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toContain('triage-failing-workflow');
      const prompt = await client.getPrompt({ name: 'triage-failing-workflow', arguments: { owner: 'acme', repo: 'widgets', workflow: 'ci.yml' } });
      expect(JSON.stringify(prompt.messages)).toContain('widgets');
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('tos://tools/test-sleep/docs');
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('tos://executions/{execution_id}');
      const docs = await client.readResource({ uri: 'tos://tools/test-sleep/docs' });
      expect(JSON.stringify(docs.contents)).toContain('How long to sleep.');
      const progress: number[] = [];
      const result = await client.callTool({ name: 'test-sleep', arguments: { ms: 300 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('slept_ms');
      expect(progress.length).toBeGreaterThan(0);

      // The host's cancel reaches the service through the bridge: the remote execution ends cancelled.
      const cancelledSleeps = async () => (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=test-sleep&status=cancelled', key: suite.acme.key })).json();
      const before = (await cancelledSleeps()).total as number;
      const host = new AbortController();
      const slow = client.callTool({ name: 'test-sleep', arguments: { ms: 20_000 } }, undefined, { signal: host.signal, onprogress: () => host.abort() });
      await expect(slow).rejects.toThrow(/abort/i);
      const cancelled = await until('the bridged call cancelled on the service', async () => {
        const listed = await cancelledSleeps();
        return listed.total > before ? listed.executions : undefined;
      });
      expect(cancelled[0]).toMatchObject({ tool_id: 'test-sleep', status: 'cancelled' });
    } finally {
      await client.close();
    }
  });

  it('mcp stdio without a service configured says so in one line and exits 2', async () => {
    const unconfigured = await tos(['mcp', 'stdio'], { TOS_URL: '', TOS_API_KEY: '' });
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stdout).toBe('');
    expect(unconfigured.stderr.trim().split('\n')[0]).toMatch(/^tos: NOT_CONFIGURED: no service configured/);
    expect(unconfigured.stderr).not.toMatch(/\n\s+at /);
    const refused = await tos(['mcp', 'stdio'], { TOS_API_KEY: `sk_svc_${'x'.repeat(32)}` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^tos: CONNECTION_FAILED: cannot open an MCP session/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  it('upstreams add (an OpenAPI document), list, show, test, disable and enable a tool, rm; the tools invoked like any other', async () => {
    const api = await startPetsApi();
    try {
      const added = await json(['upstreams', 'add', 'pets', '--openapi', `${api.origin}/openapi.json`, '--base-url', `${api.origin}/api`, '--operations', 'listPets,showPetById']);
      expect(added).toMatchObject({ code: 0, body: { name: 'pets', type: 'openapi', status: { tool_count: 2, last_error: null } } });
      const upstreamId = added.body.id as string;
      const table = await tos(['upstreams', 'list']);
      expect(table.stdout).toMatch(/^ID\s+NAME\s+TYPE\s+WHERE\s+TOOLS\s+ENABLED\s+LAST ERROR\n/);
      expect(table.stdout).toMatch(new RegExp(`\\n${upstreamId}\\s+pets\\s+openapi\\s+${api.origin}/api\\s+2\\s+true`));
      expect((await json(['upstreams', 'show', upstreamId])).body.tools.map((tool: { id: string }) => tool.id)).toEqual(['pets.listPets', 'pets.showPetById']);
      expect(await json(['invoke', 'pets.showPetById', '--set', 'petId=1'])).toMatchObject({ code: 0, body: { status: 'success', result: { id: 1, name: 'Rex' } } });
      expect(await json(['upstreams', 'test', upstreamId])).toMatchObject({ code: 0, body: { status: { tool_count: 2, last_error: null } } });

      const off = await json(['upstreams', 'disable', upstreamId, '--tool', 'showPetById']);
      expect(off.body.tools).toEqual([expect.objectContaining({ name: 'listPets', enabled: true }), expect.objectContaining({ name: 'showPetById', enabled: false })]);
      await until('the tool gone from the catalogue', async () => ((await json(['invoke', 'pets.showPetById', '--set', 'petId=1'])).code !== 0 ? true : undefined));
      expect((await json(['upstreams', 'enable', upstreamId, '--tool', 'showPetById'])).body.tools[1]).toMatchObject({ enabled: true });

      // Usage errors say what to give, before any request.
      const neither = await tos(['upstreams', 'add', 'x']);
      expect(neither).toMatchObject({ code: 2, stderr: expect.stringContaining('give --url (an MCP server) or --openapi') });
      expect((await tos(['upstreams', 'add', 'x', '--openapi', `${api.origin}/openapi.json`])).stderr).toContain('--openapi needs --base-url and --operations');
      expect((await tos(['upstreams', 'add', 'x', '--url', `${api.origin}/mcp`, '--api-key-header', 'x-key'])).stderr).toContain('--api-key-header and --api-key-secret go together');
      // An upstream the service cannot reach: registered with its error, and `test` exits 1 saying it.
      const dead = await json(['upstreams', 'add', 'dead', '--url', 'http://127.0.0.1:9/mcp']);
      expect(dead.body.status.last_error).toEqual(expect.any(String));
      expect(await tos(['upstreams', 'test', dead.body.id])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tos: UPSTREAM_UNREACHABLE: /) });

      for (const upstream of [upstreamId, dead.body.id]) expect(await json(['upstreams', 'rm', upstream])).toMatchObject({ code: 0, body: { deleted: upstream } });
      expect((await json(['upstreams', 'list'])).body).toEqual([]);

      // The audit log: everything above, newest first, kept after the deletions; a table filtered by action.
      const log = (await json(['upstreams', 'audit', upstreamId])).body as Array<{ action: string }>;
      expect(log.map((event) => event.action)).toEqual(['upstream.deleted', 'upstream.tool_enabled', 'upstream.tool_disabled', 'upstream.called', 'upstream.created']);
      expect(log[3]).toMatchObject({ details: { tool_id: 'pets.showPetById', outcome: 'ok' } });
      const deletions = await tos(['upstreams', 'audit', '--action', 'upstream.deleted']);
      expect(deletions.stdout).toMatch(/^TIME\s+ACTION\s+UPSTREAM\s+ACTOR\s+TOOL\s+OUTCOME\n/);
      expect(deletions.stdout.trim().split('\n').slice(1).map((line) => line.match(/upstream\.\w+\s+(\S+)/)?.[1]).sort()).toEqual(['dead', 'pets']);
    } finally {
      await api.close();
    }
  });

  it('webhooks create (secret printed once), list, test, deliveries, redeliver, rotate, update, delete', async () => {
    const receiver = await startRecordingServer(() => ({ status: 200, body: 'thanks' }));
    const hooks = `${receiver.url}/hooks`;
    try {
      const created = await tos(['webhooks', 'create', '--url', hooks, '--events', 'execution.completed,execution.failed', '--description', 'cli']);
      expect(created).toMatchObject({ code: 0, stderr: expect.stringContaining('shown only this once') });
      const secret = /^secret: (whsec_\S+)$/m.exec(created.stdout)![1];
      const webhookId = /^id: (wh_\S+)$/m.exec(created.stdout)![1];
      expect(created.stdout).toContain('events: execution.completed, execution.failed\n');
      const shown = await json(['webhooks', 'show', webhookId]);
      expect(shown.body).toMatchObject({ id: webhookId, url: hooks, enabled: true });
      expect(shown.stdout).not.toContain('whsec_');

      const table = await tos(['webhooks', 'list']);
      expect(table.stdout).toMatch(/^ID\s+URL\s+EVENTS\s+ENABLED\s+CREATED\n/);
      expect(table.stdout).toMatch(new RegExp(`\\n${webhookId}\\s+${hooks}\\s+execution.completed,execution.failed\\s+yes\\s+\\d{4}-`));

      const ping = await json(['webhooks', 'test', webhookId]);
      expect(ping).toMatchObject({ code: 0, body: { id: expect.stringMatching(/^msg_/), event: 'ping', status: 'pending' } });
      const [first] = await arrived(receiver, 1);
      expect(first.headers['webhook-id']).toBe(ping.body.id);
      expect(verified(secret, first)).toMatchObject({ event: 'ping' });

      const delivered = await until('the ping delivered in the log', async () => {
        const log = await json(['webhooks', 'deliveries', webhookId, '--event', 'ping']);
        return log.body[0]?.status === 'delivered' ? log.body : undefined;
      });
      expect(delivered).toHaveLength(1);
      expect(delivered[0].attempts).toEqual([{ at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null, response_excerpt: 'thanks' }]);
      expect((await json(['webhooks', 'deliveries', webhookId, '--status', 'failed'])).body).toEqual([]);
      const logTable = await tos(['webhooks', 'deliveries', webhookId]);
      expect(logTable.stdout).toMatch(new RegExp(`\\n${ping.body.id}\\s+ping\\s+delivered\\s+1\\s+200\\s+\\d+\\s+\\d{4}-`));
      const badStatus = await json(['webhooks', 'deliveries', webhookId, '--status', 'lost']);
      expect(badStatus).toMatchObject({ code: 1, body: { error: { code: 'INVALID_REQUEST', message: expect.stringContaining('status') } } });

      const again = await json(['webhooks', 'redeliver', webhookId, ping.body.id]);
      expect(again).toMatchObject({ code: 0, body: { id: ping.body.id, status: 'pending' } });
      const [, second] = await arrived(receiver, 2);
      expect(second.headers['webhook-id']).toBe(ping.body.id);

      const rotated = await tos(['webhooks', 'rotate', webhookId]);
      expect(rotated).toMatchObject({ code: 0, stderr: expect.stringContaining('shown only this once') });
      const newSecret = /^secret: (whsec_\S+)$/m.exec(rotated.stdout)![1];
      expect(newSecret).not.toBe(secret);
      expect(rotated.stdout).toMatch(/^previous_secret_expires_at: \d{4}-/m);
      await json(['webhooks', 'test', webhookId]);
      const [, , third] = await arrived(receiver, 3);
      expect(verified(newSecret, third)).toMatchObject({ event: 'ping' });
      expect(verified(secret, third)).toMatchObject({ event: 'ping' }); // the old secret signs beside it during the overlap
      // Two deliveries (the first ping, redelivered under its own id, and this one), a page of one.
      const paged = await tos(['webhooks', 'deliveries', webhookId, '--limit', '1']);
      expect(paged.stdout.trim().split('\n')).toHaveLength(2); // the header and one delivery
      expect(paged.stderr).toBe('Showing 1 of 2: --limit N for more, --paginate for all.\n');
      expect((await json(['webhooks', 'deliveries', webhookId, '--paginate'])).body).toHaveLength(2);

      expect((await json(['webhooks', 'update', webhookId, '--disable'])).body).toMatchObject({ enabled: false });
      expect(await json(['webhooks', 'test', webhookId])).toMatchObject({ code: 1, body: { error: { code: 'CONFLICT' } } });
      expect((await json(['webhooks', 'update', webhookId, '--enable', '--events', 'execution.failed'])).body).toMatchObject({ enabled: true, events: ['execution.failed'] });
      expect((await tos(['webhooks', 'update', webhookId])).code).toBe(2);
      expect((await tos(['webhooks', 'update', webhookId, '--enable', '--disable'])).code).toBe(2);

      expect(await json(['webhooks', 'delete', webhookId])).toMatchObject({ code: 0, body: { deleted: webhookId } });
      expect(await json(['webhooks', 'show', webhookId])).toMatchObject({ code: 1, body: { error: { code: 'NOT_FOUND' } } });
    } finally {
      await receiver.close();
    }
  });

  it('prints the error envelope and exits 1 on an API error; 2 when not configured', async () => {
    const missing = await json(['tools', 'show', 'no-such-tool']);
    expect(missing.code).toBe(1);
    expect(missing.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const text = await tos(['tools', 'show', 'no-such-tool']);
    expect(text.stderr).toContain(missing.body.error.code);
    const unauthorised = await json(['tools', 'list'], { TOS_API_KEY: 'tos_wrong' });
    expect(unauthorised.code).toBe(1);
    expect((await tos(['invoke', 'test-sleep', '--input', '{not json'])).code).toBe(2);
    expect((await tos(['invoke'])).code).toBe(2);
    const unconfigured = await json(['tools', 'list'], { TOS_URL: '' });
    expect(unconfigured).toMatchObject({ code: 2, body: { error: { code: 'NOT_CONFIGURED' } } });
  });
  it('lists print tables with the columns people scan, cut to the width of a terminal', async () => {
    const table = await tos(['tools', 'list', '--search', 'Sleeps for']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatchSnapshot();
    const command = [process.execPath, '-r', 'ts-node/register/transpile-only', CLI, 'tools', 'list', '--search', "'Sleeps for'"].join(' ');
    const { stdout } = await run('script', ['-qfc', `stty cols 60; ${command}`, '/dev/null'], { env: { PATH: process.env.PATH!, TOS_URL: url, TOS_API_KEY: suite.acme.key } });
    const lines = stdout.split(/\r?\n/).filter(Boolean);
    expect(lines[0]).toMatch(/^ID\s+CATEGORY\s+STATUS\s+VERSION\s+DESCRIPTION$/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^test-sleep\s+automation\s+ready\s+1\.0\.0\s+Sleeps for.*…$/);
  });

  it('--json takes a field list, --jq filters it; an unknown field or a bad expression is a usage error', async () => {
    expect(JSON.parse((await tos(['tools', 'show', 'test-sleep', '--json', 'id,category'])).stdout)).toEqual({ id: 'test-sleep', category: 'automation' });
    expect((await tos(['tools', 'list', '--search', 'Sleeps for', '--jq', '.[].id'])).stdout).toBe('test-sleep\n');
    expect(JSON.parse((await tos(['tools', 'list', '--category', 'automation', '--json', 'category'])).stdout).every((t: { category: string }) => t.category === 'automation')).toBe(true);
    const unknown = await tos(['tools', 'list', '--json', 'id,nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown JSON field 'nope'; available fields: id, name, category");
    const badJq = await tos(['tools', 'list', '--jq', '.[']);
    expect(badJq.code).toBe(2);
    expect(badJq.stderr).toMatch(/^tos: --jq: jq: error/);
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
    expect((await tos(['--version'])).stdout).toBe(`${version}\n`);
  });

  it('pages through more than one page of executions (--limit across pages, --paginate for all)', async () => {
    for (let i = 0; i < 105; i++) {
      const made = await suite.t.request({ method: 'POST', url: '/v1/tools/test-record/invoke', key: suite.acme.key, payload: { inputs: { ms: 0 } }, headers: { 'cache-control': 'no-cache' } });
      expect(made.statusCode).toBe(200);
    }
    const total = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=test-record&limit=1', key: suite.acme.key })).json().total as number;
    expect(total).toBeGreaterThanOrEqual(105);
    const all = JSON.parse((await tos(['executions', 'list', '--tool-id', 'test-record', '--paginate', '--json', 'id'])).stdout) as { id: string }[];
    expect(all).toHaveLength(total);
    expect(new Set(all.map((e) => e.id)).size).toBe(total);
    const first = JSON.parse((await tos(['executions', 'list', '--tool-id', 'test-record', '--limit', '102', '--json', 'id'])).stdout) as { id: string }[];
    expect(first).toEqual(all.slice(0, 102));
    const table = await tos(['executions', 'list', '--tool-id', 'test-record', '--limit', '2']);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(table.stdout).toMatch(/^ID\s+TOOL\s+STATUS\s+PROGRESS\s+CREATED\s+DURATION MS\n/);
    expect(table.stderr).toMatch(/^Showing 2( of \d+)?: --limit N for more, --paginate for all\.\n$/);
  }, 120_000);

  it('--set keeps a string a string unless the tool schema says otherwise; key:=json is raw JSON', async () => {
    // token is a string in the schema: 12345 must arrive as "12345", or the tool refuses it.
    expect(await json(['invoke', 'test-misbehave', '--set', 'mode=ok', '--set', 'token=12345'])).toMatchObject({ code: 0, body: { status: 'success' } });
    expect(await json(['invoke', 'test-sleep', '--set', 'ms=0', '--set', 'ignore_signal=false'])).toMatchObject({ code: 0, body: { result: { slept_ms: 0 } } });
    expect(await json(['invoke', 'test-sleep', '--set', 'ms:=0'])).toMatchObject({ code: 0, body: { status: 'success' } });
    const notANumber = await tos(['invoke', 'test-sleep', '--set', 'ms=soon']);
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain("--set ms: expected a number, got 'soon'");
  });

  it('login refuses a key the service refuses and saves nothing; auth status and whoami say who the key is', async () => {
    const configHome = mkdtempSync(path.join(tmpdir(), 'tos-config-'));
    const env = { TOS_URL: '', TOS_API_KEY: '', XDG_CONFIG_HOME: configHome };
    const file = path.join(configHome, 'tos', 'config.json');
    try {
      const refused = await tos(['login', '--url', url], env, `sk_svc_${'x'.repeat(32)}\n`);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^tos: UNAUTHORIZED: .*\(nothing saved\)/);
      expect(existsSync(file)).toBe(false);
      const unreachable = await tos(['auth', 'login', '--url', 'http://127.0.0.1:9'], env, `${suite.acme.key}\n`);
      expect(unreachable).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tos: CONNECTION_FAILED: .*\(nothing saved\)/) });
      expect(existsSync(file)).toBe(false);

      const accepted = await tos(['login', '--url', url, '--json'], env, `${suite.acme.key}\n`);
      expect(accepted.code).toBe(0);
      expect(JSON.parse(accepted.stdout)).toMatchObject({ url, key_id: expect.stringMatching(/^key_/), key_type: 'service', account_id: suite.acme.id, tier: 'enterprise' });
      const status = await tos(['auth', 'status'], env);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`^Logged in to ${url} as key_\\w+ \\(service key\\)\\n  account: ${suite.acme.id} \\(tier enterprise\\)\\n`));
      expect(status.stdout).toContain(`from: profile "default" (${file})`);
      expect(JSON.parse((await tos(['whoami', '--json', 'account_id'], env)).stdout)).toEqual({ account_id: suite.acme.id });
      expect((await tos(['whoami'], { ...env, TOS_URL: url, TOS_API_KEY: `sk_svc_${'y'.repeat(32)}` })).code).toBe(1);
    } finally {
      rmSync(configHome, { recursive: true, force: true });
    }
  });

  it('schedules create, list, show, pause, resume, runs and rm; triggers create, list, show, events and rm', async () => {
    const created = await json(['schedules', 'create', '--tool', 'json-transform', '--input', '{"expression":"1","data":{}}', '--cron', '30 2 * * *', '--timezone', 'Europe/Berlin']);
    expect(created).toMatchObject({ code: 0, body: { id: expect.stringMatching(/^sch_/), target: { tool: 'json-transform' }, timezone: 'Europe/Berlin', paused: false } });
    const id = created.body.id as string;
    expect((await json(['schedules', 'list'])).body.map((s: { id: string }) => s.id)).toContain(id);
    expect((await json(['schedules', 'pause', id])).body).toMatchObject({ paused: true, next_runs: [] });
    expect((await json(['schedules', 'resume', id])).body.next_runs).toHaveLength(5);
    expect((await json(['schedules', 'show', id])).body.id).toBe(id);
    expect(await json(['schedules', 'runs', id])).toMatchObject({ code: 0, body: [] });
    const table = await tos(['schedules', 'list']);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+tool json-transform\\s+30 2 \\* \\* \\*\\s+Europe/Berlin\\s+active`));
    expect(await json(['schedules', 'rm', id])).toMatchObject({ code: 0, body: { deleted: id } });
    const neither = await tos(['schedules', 'create', '--cron', '* * * * *']);
    expect(neither.code).not.toBe(0);
    expect(neither.stderr).toContain('--tool or --workflow');

    const trigger = await json(['triggers', 'create', '--tool', 'json-transform', '--input', '{"expression":"ref"}', '--verify', 'bearer', '--map', 'data=payload', '--filter', "payload.ref = 'main'"]);
    expect(trigger).toMatchObject({ code: 0, body: { id: expect.stringMatching(/^trg_/), verification: { type: 'bearer' }, inputs: { data: 'payload' }, secret: expect.any(String) } });
    const delivered = await fetch(`${url}${trigger.body.url}`, { method: 'POST', headers: { authorization: `Bearer ${trigger.body.secret}`, 'content-type': 'application/json' }, body: '{"ref":"main"}' });
    expect(delivered.status).toBe(202);
    expect((await json(['triggers', 'events', trigger.body.id])).body).toEqual([expect.objectContaining({ status: 'started', accepted: true })]);
    expect((await json(['triggers', 'show', trigger.body.id])).body.secret).toBeUndefined();
    const internal = await json(['triggers', 'create', '--tool', 'json-transform', '--input', '{"expression":"1","data":{}}', '--on', 'execution.failed', '--of-tools', 'test-misbehave']);
    expect(internal.body).toMatchObject({ source: { event: 'execution.failed', tool_ids: ['test-misbehave'] }, url: null });
    expect((await json(['triggers', 'list'])).body.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([trigger.body.id, internal.body.id]));
    expect(await json(['triggers', 'rm', trigger.body.id])).toMatchObject({ code: 0, body: { deleted: trigger.body.id } });
  });

  it('workspaces upload, list, show and delete; usage', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tos-ws-src-'));
    try {
      writeFileSync(path.join(dir, 'app.js'), 'console.log(1);\n');
      await run('tar', ['-czf', path.join(dir, 'src.tar.gz'), '-C', dir, 'app.js']);
      const uploaded = await json(['workspaces', 'upload', path.join(dir, 'src.tar.gz')]);
      expect(uploaded).toMatchObject({ code: 0, body: { id: expect.stringMatching(/^ws_/), files: 1 } });
      const id = uploaded.body.id as string;
      const table = await tos(['workspaces', 'list']);
      expect(table.stdout).toMatch(new RegExp(`^ID\\s+FORMAT\\s+FILES\\s+BYTES\\s+CREATED\\s+EXPIRES\\n${id}\\s+tar\\.gz\\s+1\\s`));
      expect((await json(['workspaces', 'show', id])).body).toMatchObject({ id, format: 'tar.gz' });
      expect((await tos(['workspaces', 'delete', id])).code).toBe(0);
      expect((await tos(['workspaces', 'list', '--jq', '.[].id'])).stdout).not.toContain(id);
      expect((await tos(['workspaces', 'upload'])).code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const usage = await tos(['usage']);
    expect(usage.stdout).toMatch(/^tier: enterprise\nrequests this minute: \d+ of 10000 \(this key; resets .*\)\ntool calls this month: \d+ of unlimited/);
  });

  describe('shell completion, in the real shells', () => {
    let bin: string;
    let shellEnv: Record<string, string>;
    const script = async (shell: string) => {
      const file = path.join(bin, `completion.${shell}`);
      writeFileSync(file, (await tos(['completion', shell])).stdout);
      return file;
    };
    const lines = (text: string) => text.split('\n').filter(Boolean);
    const quoted = (words: string[]) => words.map((w) => `'${w}'`).join(' ');

    beforeAll(() => {
      bin = mkdtempSync(path.join(tmpdir(), 'tos-bin-'));
      // `tos` on the PATH, as the scripts expect it.
      writeFileSync(path.join(bin, 'tos'), `#!/bin/sh\nexec "${process.execPath}" -r ts-node/register/transpile-only "${CLI}" "$@"\n`, { mode: 0o755 });
      shellEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: bin };
    });
    afterAll(() => rmSync(bin, { recursive: true, force: true }));

    it('bash completes commands, options and choices from the command tree', async () => {
      const file = await script('bash');
      const complete = async (...words: string[]) => {
        const probe = `source '${file}'; COMP_WORDS=(${quoted(words)}); COMP_CWORD=${words.length - 1}; _tos_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
        return lines((await run('bash', ['-c', probe], { env: shellEnv, cwd: path.join(__dirname, '..') })).stdout);
      };
      expect(await complete('tos', 'exec')).toEqual(['executions']);
      expect(await complete('tos', 'executions', '')).toEqual(['list', 'show', 'cancel', 'follow']);
      expect(await complete('tos', 'keys', 'create', '--type', 'te')).toEqual(['temporary', 'temp']);
      expect(await complete('tos', 'tools', 'list', '--pa')).toEqual(['--paginate']);
    });

    // zsh and fish come from test/setup.sh (npm test's first step): missing, the suite fails naming them.
    const available = (shell: string) => {
      if (['/usr/bin', '/bin', '/usr/local/bin'].some((dir) => existsSync(path.join(dir, shell)))) return it;
      throw new Error(missingPrerequisite(`${shell}, whose completion this suite runs`, shell));
    };

    available('zsh')('zsh offers the candidates with their descriptions (files when there are none)', async () => {
      const file = await script('zsh');
      const complete = async (...words: string[]) => {
        // _describe and _files stand in for the completion system's widgets: they print what they were given.
        const probe = `autoload -U compinit; compinit -u -d '${bin}/zcompdump'; source '${file}'; _describe() { print -rl -- "\${(@P)2}" }; _files() { print FILES }; words=(${quoted(words)}); CURRENT=${words.length}; _tos`;
        return lines((await run('zsh', ['-c', probe], { env: shellEnv, cwd: path.join(__dirname, '..') })).stdout);
      };
      expect(await complete('tos', 'executions', '')).toEqual([
        'list:executions of this account, newest first',
        'show:one execution\\: status, input, result or error',
        'cancel:cancel a queued or running execution',
        'follow:show live progress until the execution ends (exit code per its outcome)',
      ]);
      expect(await complete('tos', 'completion', '')).toEqual(['bash:', 'zsh:', 'fish:']);
      expect(await complete('tos', 'workspaces', 'upload', '')).toEqual(['FILES']);
    });

    available('fish')('fish completes with descriptions', async () => {
      const file = await script('fish');
      const complete = async (line: string) => lines((await run('fish', ['-c', `source '${file}'; complete -C '${line}'`], { env: shellEnv, cwd: path.join(__dirname, '..') })).stdout);
      expect(await complete('tos exec')).toEqual(['executions\tlist, inspect, cancel and follow executions']);
      expect(await complete('tos keys create --type te')).toEqual(expect.arrayContaining(['temporary\tkey type', 'temp\tkey type']));
    });
  });

  it('operator commands run while the embedded service holds DATA_DIR, through its loopback operator endpoint', async () => {
    const env = { DATA_DIR: suite.env.DATA_DIR, TOS_URL: '', TOS_API_KEY: '' };
    const file = path.join(suite.env.DATA_DIR, 'operator.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const started = performance.now();
    const created = await tos(['accounts', 'create', '--name', 'live-co', '--tier', 'pro', '--json'], env);
    const took = performance.now() - started;
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'live-co', tier: 'pro' });
    console.log(`operator command through the running service: ${Math.round(took)} ms (ts-node start included)`);
    const listed = await tos(['accounts', 'list'], env);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+TIER\s+CREATED\n/);
    expect(listed.stdout).toMatch(/\nacc_\w+\s+live-co\s+pro\s+\d{4}-/);
    // The link starts with where the service really listens (it listened on port 0), not with the CLI's PORT.
    const port = new URL(url).port;
    const link = await tos(['console', 'link', '--account', 'live-co'], { ...env, PORT: '3000' });
    expect(link.stdout).toMatch(new RegExp(`^http://localhost:${port}/console#/sign-in/[0-9A-Za-z]{43}\\n\\(works once, until `));
    const missing = await tos(['keys', 'list', '--account', 'nobody'], env);
    expect(missing).toMatchObject({ code: 1, stderr: 'tos: NOT_FOUND: Account not found: nobody\n' });

    // Nobody without the token gets in: no token, a wrong one, a foreign Host; and the public port has no such route.
    const endpoint = readOperatorFile(suite.env.DATA_DIR)!;
    expect(new URL(endpoint.url!).hostname).toBe('127.0.0.1');
    const call = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const target = new URL(`${endpoint.url}/operator/accounts.list`);
        const req = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject).end('{}');
      });
    expect(await call({ authorization: `Bearer ${endpoint.token}` })).toBe(200);
    expect(await call({})).toBe(401);
    expect(await call({ authorization: `Bearer ${endpoint.token!.slice(1)}x` })).toBe(401);
    expect(await call({ authorization: `Bearer ${endpoint.token}`, host: `attacker.example:${new URL(endpoint.url!).port}` })).toBe(401);
    const onPublicPort = await fetch(`${url}/operator/accounts.list`, { method: 'POST', headers: { authorization: `Bearer ${endpoint.token}` } });
    expect(onPublicPort.status).not.toBe(200);
  });
});
