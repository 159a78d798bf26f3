/**
 * Upstreams' health and visibility (docs/upstreams.md#metrics, #audit-log) on both engines, and
 * across an API process and a worker process, against the reference server
 * `@modelcontextprotocol/server-everything` on 127.0.0.1: per-upstream metrics scraped from
 * /metrics (calls by outcome — ok sync and queued, cancelled, unavailable, refused; duration;
 * tools; up; a deleted upstream's series gone), and the audit log of who registered, changed and
 * called what, for its account alone, filtered, paged, without secret values, and pruned past its
 * retention.
 */
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { useEverything } from './support/everything-server';
import { until } from './support/poll';
import { UpstreamAudit } from '../src/upstreams/upstream-audit';
import { startTestApp } from './support/app';
import { ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';

const METRICS_TOKEN = 'metrics-token-upstreams-0123';
const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', METRICS_TOKEN };

describeEachEngine('upstreams: metrics and audit log', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  const reference = useEverything();

  let accounts = 0;
  const account = () => suite.t.createAccount(`upa-${++accounts}`);
  const register = (owner: TestAccount, body: object) =>
    suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { transport: 'streamable-http', auth: { none: true }, url: reference.server.url, ...body } });
  const invoke = (key: string, toolId: string, payload: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload });
  const audit = (key: string, url: string) => suite.t.request({ method: 'GET', url, key });
  const keyIdOf = async (owner: TestAccount) => (await suite.t.request({ method: 'GET', url: '/v1/keys', key: owner.key })).json().keys[0].id as string;
  const scrape = async () => {
    const response = await suite.t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.statusCode).toBe(200);
    return response.body;
  };
  const sample = sampleOf;
  const ended = (key: string, id: string) =>
    until('the execution ends', async () => {
      const row = (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
      return row.status === 'queued' || row.status === 'running' ? undefined : row;
    });

  it('counts calls per upstream id and outcome, times them, reports tools and health, and forgets a deleted upstream', async () => {
    const owner = await account();
    const upstream = (await register(owner, { name: 'everything', tools: { include: ['echo', 'get-sum', 'trigger-long-running-operation'] } })).json();
    const other = (await register(owner, { name: 'spare', tools: { include: ['echo'] } })).json();
    const label = { upstream: upstream.id };

    expect((await invoke(owner.key, 'everything.get-sum', { a: 1, b: 2 })).json().status).toBe('success');
    expect((await invoke(owner.key, 'everything.echo', { message: 'hi' })).json().status).toBe('success');
    // Queued: in the distributed engine the call runs in the queue's consumer, not the request.
    const queued = (await invoke(owner.key, 'everything.get-sum', { inputs: { a: 3, b: 4 } }, '?async=true')).json();
    expect((await ended(owner.key, queued.execution_id)).status).toBe('success');
    // Cancelled mid-call.
    const long = (await invoke(owner.key, 'everything.trigger-long-running-operation', { inputs: { duration: 60, steps: 60 } }, '?async=true')).json();
    await until('the long call runs', async () => ((await suite.t.request({ method: 'GET', url: `/v1/executions/${long.execution_id}`, key: owner.key })).json().status === 'running' ? true : undefined));
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${long.execution_id}`, key: owner.key })).statusCode).toBeLessThan(300);
    expect((await ended(owner.key, long.execution_id)).status).toBe('cancelled');
    // Pointed at a port nobody listens on, then at an address the egress policy refuses, after registration.
    const repoint = async (url: string) => {
      await suite.t.app.get(DataSource).query(`UPDATE upstreams SET url = $1 WHERE id = $2`, [url, upstream.id]);
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // the catalogue's one-second reuse
    };
    await repoint('http://127.0.0.1:9/mcp');
    expect((await invoke(owner.key, 'everything.get-sum', { a: 1, b: 1 })).json().error).toMatchObject({ retryable: true });
    await repoint(`http://127.0.0.2:${reference.server.port}/mcp`);
    expect((await invoke(owner.key, 'everything.get-sum', { a: 1, b: 1 })).json().error).toMatchObject({ message: expect.stringContaining('egress policy refuses') });

    const body = await scrape();
    expect(sample(body, 'tos_upstream_calls_total', { ...label, outcome: 'ok' })).toBe(3);
    expect(sample(body, 'tos_upstream_calls_total', { ...label, outcome: 'refused' })).toBe(1);
    expect(sample(body, 'tos_upstream_calls_total', { ...label, outcome: 'unavailable' })).toBe(1);
    expect(sample(body, 'tos_upstream_calls_total', { ...label, outcome: 'cancelled' })).toBe(1);
    expect(sample(body, 'tos_upstream_calls_total', { ...label, outcome: 'failed' })).toBeUndefined();
    expect(sample(body, 'tos_upstream_call_duration_seconds_count', label)).toBe(6);
    expect(sample(body, 'tos_upstream_call_duration_seconds_sum', label)).toBeGreaterThan(0);
    expect(sample(body, 'tos_upstream_calls_total', { upstream: other.id })).toBeUndefined();
    expect(sample(body, 'tos_upstream_tools', label)).toBe(3);
    expect(sample(body, 'tos_upstream_tools', { upstream: other.id })).toBe(1);
    expect(sample(body, 'tos_upstream_up', label)).toBe(1);
    expect(sample(body, 'tos_upstream_last_contact_seconds', label)).toBeCloseTo(Date.parse(upstream.status.last_contact_at) / 1000, 0);

    // The audit log names the same outcomes, each with its execution.
    const outcomes = await until('every call recorded', async () => {
      const events = (await suite.t.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}/audit?action=upstream.called`, key: owner.key })).json().events as Array<{ details: { outcome: string; execution_id: string } }>;
      return events.length === 6 ? events.map((event) => event.details) : undefined;
    });
    expect(outcomes.map((call) => call.outcome).sort()).toEqual(['cancelled', 'ok', 'ok', 'ok', 'refused', 'unavailable']);
    expect(outcomes).toContainEqual(expect.objectContaining({ execution_id: long.execution_id, outcome: 'cancelled' }));

    // A discovery that fails marks it down; its tools and last contact stay as last found.
    expect((await suite.t.request({ method: 'POST', url: `/v1/upstreams/${upstream.id}/refresh`, key: owner.key })).json().status.last_error).toContain('egress policy refuses');
    const down = await scrape();
    expect(sample(down, 'tos_upstream_up', label)).toBe(0);
    expect(sample(down, 'tos_upstream_tools', label)).toBe(3);
    // Disabled is down too.
    expect((await suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${other.id}`, key: owner.key, payload: { enabled: false } })).statusCode).toBe(200);
    expect(sample(await scrape(), 'tos_upstream_up', { upstream: other.id })).toBe(0);

    expect((await suite.t.request({ method: 'DELETE', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).statusCode).toBe(204);
    const gone = await scrape();
    expect(gone).not.toContain(upstream.id);
    expect(sample(gone, 'tos_upstream_tools', { upstream: other.id })).toBe(1);
  });

  it('records who registered, changed, called and deleted what, for its account alone, without secret values', async () => {
    const owner = await account();
    const actor = await keyIdOf(owner);
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/EVERYTHING_TOKEN', key: owner.key, payload: { value: 'tok-never-logged' } })).statusCode).toBeLessThan(300);
    const upstream = (await register(owner, { name: 'everything', auth: { bearer_secret_name: 'EVERYTHING_TOKEN' }, tools: { include: ['echo', 'get-sum'] } })).json();
    const patch = (payload: object) => suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${upstream.id}`, key: owner.key, payload });
    expect((await patch({ tools_enabled: { echo: false } })).statusCode).toBe(200);
    expect((await patch({ enabled: false })).statusCode).toBe(200);
    expect((await patch({ enabled: true, tools_enabled: { echo: true }, cache_ttl: 60 })).statusCode).toBe(200);
    expect((await patch({ enabled: true })).statusCode).toBe(200); // nothing changes: no event
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the catalogue's one-second reuse
    const called = (await invoke(owner.key, 'everything.get-sum', { a: 20, b: 22 })).json();
    expect(called.status).toBe('success');
    const queued = (await invoke(owner.key, 'everything.echo', { inputs: { message: 'secret-input-value' } }, '?async=true')).json();
    await ended(owner.key, queued.execution_id);

    const log = await until('both calls recorded', async () => {
      const page = (await audit(owner.key, `/v1/upstreams/${upstream.id}/audit`)).json();
      return page.total === 8 ? page : undefined;
    });
    // Newest first; the events of one change share its time.
    const actions = log.events.map((event: { action: string }) => event.action);
    expect(actions.slice(0, 2)).toEqual(['upstream.called', 'upstream.called']);
    expect(actions.slice(2, 5).sort()).toEqual(['upstream.enabled', 'upstream.tool_enabled', 'upstream.updated']);
    expect(actions.slice(5)).toEqual(['upstream.disabled', 'upstream.tool_disabled', 'upstream.created']);
    for (const event of log.events) expect(event).toMatchObject({ actor, upstream_id: upstream.id, upstream: 'everything', account_id: owner.id, created_at: expect.any(String) });
    const created = log.events.at(-1);
    expect(created.details).toMatchObject({ type: 'mcp', transport: 'streamable-http', url: reference.server.url, auth: { bearer_secret_name: 'EVERYTHING_TOKEN' }, tools_filter: { include: ['echo', 'get-sum'] } });
    expect(log.events.find((event: { action: string }) => event.action === 'upstream.tool_disabled').details).toEqual({ tool: 'echo', tool_id: 'everything.echo' });
    expect(log.events.find((event: { action: string }) => event.action === 'upstream.updated').details).toEqual({ cache_ttl: { from: 0, to: 60 } });
    const calls = log.events.filter((event: { action: string }) => event.action === 'upstream.called').map((event: { details: unknown }) => event.details);
    expect(calls).toEqual(
      expect.arrayContaining([
        { tool_id: 'everything.get-sum', execution_id: called.execution_id, outcome: 'ok' },
        { tool_id: 'everything.echo', execution_id: queued.execution_id, outcome: 'ok' },
      ]),
    );
    const text = JSON.stringify(log);
    expect(text).not.toContain('tok-never-logged');
    expect(text).not.toContain('secret-input-value');

    // Filters and paging, as the other lists page.
    const onlyCalls = (await audit(owner.key, `/v1/upstreams/audit?action=upstream.called&limit=1`)).json();
    expect(onlyCalls).toMatchObject({ total: 2, limit: 1, offset: 0, events: [{ action: 'upstream.called' }] });
    expect((await audit(owner.key, `/v1/upstreams/audit?action=upstream.called&limit=1&offset=1`)).json().events[0].id).not.toBe(onlyCalls.events[0].id);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await audit(owner.key, `/v1/upstreams/audit?since=${future}`)).json()).toMatchObject({ total: 0, events: [] });
    expect((await audit(owner.key, `/v1/upstreams/audit?until=${future}`)).json().total).toBe(8);
    for (const [query, parameter] of [['action=upstream.exploded', 'action'], ['since=yesterday', 'since'], [`since=${future}&until=2020-01-01T00:00:00Z`, 'since'], ['limit=0', 'limit']]) {
      const refused = await audit(owner.key, `/v1/upstreams/audit?${query}`);
      expect(refused.statusCode).toBe(400);
      expect(JSON.stringify(refused.json().error)).toContain(parameter);
    }

    // Kept after the upstream is deleted, with the deletion; another account sees none of it.
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).statusCode).toBe(204);
    const after = (await audit(owner.key, `/v1/upstreams/${upstream.id}/audit?limit=1`)).json();
    expect(after).toMatchObject({ total: 9, events: [{ action: 'upstream.deleted', actor, details: {} }] });
    const stranger = await account();
    expect((await audit(stranger.key, `/v1/upstreams/${upstream.id}/audit`)).statusCode).toBe(404);
    expect((await audit(stranger.key, '/v1/upstreams/audit')).json()).toMatchObject({ total: 0, events: [] });
    expect((await audit(owner.key, '/v1/upstreams/up_nope/audit')).statusCode).toBe(404);
    const reader = await suite.t.createKey(owner.id, { name: 'reader', type: 'service', scopes: ['tools:read', 'tools:invoke'] });
    expect((await audit(reader, '/v1/upstreams/audit')).statusCode).toBe(403);
  });

  it('prunes events older than UPSTREAM_AUDIT_RETENTION_DAYS (90 by default), keeping the others', async () => {
    const owner = await account();
    const upstream = (await register(owner, { name: 'everything', tools: { include: ['echo'] } })).json();
    expect((await suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${upstream.id}`, key: owner.key, payload: { enabled: false } })).statusCode).toBe(200);
    await suite.t.app.get(DataSource).query(`UPDATE upstream_audit_events SET created_at = now() - interval '91 days' WHERE upstream_id = $1 AND action = 'upstream.created'`, [upstream.id]);
    expect(await suite.t.app.get(UpstreamAudit).prune()).toBeGreaterThanOrEqual(1);
    const left = (await audit(owner.key, `/v1/upstreams/${upstream.id}/audit`)).json();
    expect(left.events.map((event: { action: string }) => event.action)).toEqual(['upstream.disabled']);
  });
});

/** A value of the series of `name` having these labels (among others) in a Prometheus text body, or undefined. */
function sampleOf(body: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of body.split('\n')) {
    const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const has = Object.fromEntries([...match[2].matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]));
    if (Object.entries(labels).every(([key, value]) => has[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe('upstreams: metrics and audit log across processes [distributed]', () => {
  let cleanup: (() => Promise<void>) | undefined;
  let api: Awaited<ReturnType<typeof startTestApp>> | undefined;
  let worker: ServiceProcess | undefined;
  let workerMetrics: string;
  const reference = useEverything();

  beforeAll(async () => {
    const prepared = await ENGINE_MODES.find((m) => m.name === 'distributed')!.prepare();
    cleanup = prepared.cleanup;
    api = await startTestApp({ env: { ...prepared.env, ...ENV, ROLE: 'api' } });
    const port = await freePort();
    worker = await startServiceProcess('worker', { ...prepared.env, ...ENV, WORKSPACE_ROOT: api.workspaceRoot, METRICS_PORT: String(port) });
    workerMetrics = `http://127.0.0.1:${port}/metrics`;
  }, 120_000);
  afterAll(async () => {
    await killProcess(worker);
    await api?.close();
    await cleanup?.();
  });

  it("counts a queued call in the worker that ran it, health in the API process; the worker records the call's event", async () => {
    const owner = await api!.createAccount('upa-processes');
    const upstream = (await api!.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { name: 'everything', transport: 'streamable-http', url: reference.server.url, auth: { none: true }, tools: { include: ['get-sum'] } } })).json();
    const queued = (await api!.request({ method: 'POST', url: '/v1/tools/everything.get-sum/invoke?async=true', key: owner.key, payload: { inputs: { a: 1, b: 2 } } })).json();
    const ended = await until('the worker runs it', async () => {
      const row = (await api!.request({ method: 'GET', url: `/v1/executions/${queued.execution_id}`, key: owner.key })).json();
      return row.status === 'queued' || row.status === 'running' ? undefined : row;
    }, 60_000);
    expect(ended.status).toBe('success');

    const fromWorker = await (await fetch(workerMetrics)).text();
    expect(sampleOf(fromWorker, 'tos_upstream_calls_total', { upstream: upstream.id, outcome: 'ok', role: 'worker' })).toBe(1);
    expect(sampleOf(fromWorker, 'tos_upstream_call_duration_seconds_count', { upstream: upstream.id, role: 'worker' })).toBe(1);
    expect(sampleOf(fromWorker, 'tos_upstream_tools', { upstream: upstream.id })).toBeUndefined(); // health is the API processes'
    const fromApi = (await api!.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    expect(sampleOf(fromApi, 'tos_upstream_calls_total', { upstream: upstream.id })).toBeUndefined();
    expect(sampleOf(fromApi, 'tos_upstream_tools', { upstream: upstream.id, role: 'api' })).toBe(1);
    expect(sampleOf(fromApi, 'tos_upstream_up', { upstream: upstream.id, role: 'api' })).toBe(1);

    const keyId = (await api!.request({ method: 'GET', url: '/v1/keys', key: owner.key })).json().keys[0].id;
    const calls = await until('the call recorded', async () => {
      const page = (await api!.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}/audit?action=upstream.called`, key: owner.key })).json();
      return page.total === 1 ? page.events : undefined;
    });
    expect(calls[0]).toMatchObject({ actor: keyId, account_id: owner.id, details: { tool_id: 'everything.get-sum', execution_id: queued.execution_id, outcome: 'ok' } });
  }, 120_000);
});
