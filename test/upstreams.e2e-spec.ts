/**
 * Upstream MCP servers (docs/upstreams.md) on both engines, against the official reference server
 * `@modelcontextprotocol/server-everything` over Streamable HTTP on 127.0.0.1: registration and
 * discovery, its tools as `everything.<tool>` in REST and MCP for the owning account alone, calls
 * through REST (sync, async, cancelled) and MCP, inputs refused before the call, a narrowed key,
 * per-tool and per-upstream switches, and refused egress at registration and at call time.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { useEverything } from './support/everything-server';
import { until } from './support/poll';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1' };

describeEachEngine('upstream MCP servers', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  const reference = useEverything();

  let accounts = 0;
  const account = () => suite.t.createAccount(`up-${++accounts}`);
  const register = (owner: TestAccount, body: object) => suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { transport: 'streamable-http', auth: { none: true }, ...body } });
  const invoke = (key: string, toolId: string, payload: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload });
  const mcp = (key: string, message: object) =>
    suite.t.request({ method: 'POST', url: '/v1/mcp', key, payload: { jsonrpc: '2.0', id: 1, ...message }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
  const mcpNames = async (key: string) => {
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await mcp(key, { method: 'tools/list', params: cursor ? { cursor } : {} })).json().result;
      all.push(...page.tools.map((tool: { name: string }) => tool.name));
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  };
  const restIds = async (key: string) => (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key })).json().tools.map((tool: { id: string }) => tool.id) as string[];
  const execution = async (key: string, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();

  it("runs README's bring-your-own-tools example as it is written (the server's port aside)", async () => {
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Bring your own tools'));
    const [registration, call] = [...section.matchAll(/-d '(\{.*?\})'/g)].map(([, body]) => JSON.parse(body));
    const owner = await account();
    const created = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { ...registration, url: registration.url.replace('127.0.0.1:3001', new URL(reference.server.url).host) } });
    expect(created.json()).toMatchObject({ name: 'everything', tools: expect.arrayContaining([expect.objectContaining({ id: 'everything.echo' })]), status: { last_error: null } });
    expect(section).toContain(`"tool_count": ${created.json().status.tool_count}`);
    const echoed = await invoke(owner.key, 'everything.echo', call);
    expect(echoed.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: `Echo: ${call.message}` }] } });
    expect(section).toContain(`"text": "Echo: ${call.message}"`);
  });

  it('registers the reference server, lists its tools under the namespace, for its account alone', async () => {
    const owner = await account();
    const created = await register(owner, { name: 'everything', url: reference.server.url, tools: { exclude: ['get-env'] } });
    expect(created.statusCode).toBe(201);
    const upstream = created.json();
    expect(upstream).toMatchObject({ name: 'everything', enabled: true, auth: { none: true }, status: { last_error: null } });
    expect(upstream.status.tool_count).toBeGreaterThan(5);
    expect(upstream.status.latency_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(upstream.status.last_contact_at)).toBeGreaterThan(Date.now() - 60_000);
    const names = upstream.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content']));
    expect(names).not.toContain('get-env');

    expect((await suite.t.request({ method: 'GET', url: '/v1/upstreams', key: owner.key })).json().upstreams.map((u: { id: string }) => u.id)).toEqual([upstream.id]);
    expect((await suite.t.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).json().id).toBe(upstream.id);
    expect(await restIds(owner.key)).toEqual(expect.arrayContaining(['everything.echo', 'everything.get-sum', 'json-transform']));
    const detail = (await suite.t.request({ method: 'GET', url: '/v1/tools/everything.get-sum', key: owner.key })).json();
    expect(detail).toMatchObject({ id: 'everything.get-sum', kind: 'upstream', upstream: 'everything', input_schema: { properties: { a: { type: 'number' }, b: { type: 'number' } } } });
    expect(await mcpNames(owner.key)).toEqual(expect.arrayContaining(['everything.echo', 'everything.get-sum']));

    const stranger = await account();
    expect(await restIds(stranger.key)).not.toContain('everything.echo');
    expect(await mcpNames(stranger.key)).not.toContain('everything.echo');
    expect((await suite.t.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}`, key: stranger.key })).statusCode).toBe(404);
    expect((await invoke(stranger.key, 'everything.get-sum', { a: 1, b: 2 })).statusCode).toBe(404);
    expect((await mcp(stranger.key, { method: 'tools/call', params: { name: 'everything.get-sum', arguments: { a: 1, b: 2 } } })).json().error).toMatchObject({ code: -32602 });
    // The name is the account's: a second one of the same name conflicts, another account's does not.
    expect((await register(owner, { name: 'everything', url: reference.server.url })).statusCode).toBe(409);
  });

  it('calls upstream tools through REST and MCP as executions, refusing bad input before the call', async () => {
    const owner = await account();
    expect((await register(owner, { name: 'everything', url: reference.server.url })).statusCode).toBe(201);

    const summed = await invoke(owner.key, 'everything.get-sum', { a: 2, b: 40 });
    expect(summed.statusCode).toBe(200);
    const body = summed.json();
    expect(body).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: expect.stringContaining('42') }] } });
    expect(await execution(owner.key, body.execution_id)).toMatchObject({ tool_id: 'everything.get-sum', status: 'success' });

    const structured = (await invoke(owner.key, 'everything.get-structured-content', { location: 'New York' })).json();
    expect(structured).toMatchObject({ status: 'success', result: { temperature: expect.any(Number), conditions: expect.any(String) } });

    const before = (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=100', key: owner.key })).json().total;
    const refused = await invoke(owner.key, 'everything.get-sum', { a: 'two', b: 40 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'a' } });
    const missing = await invoke(owner.key, 'everything.get-sum', { a: 2 });
    expect(missing.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'b' } });
    expect((await suite.t.request({ method: 'GET', url: '/v1/executions?limit=100', key: owner.key })).json().total).toBe(before);

    const queued = await invoke(owner.key, 'everything.echo', { inputs: { message: 'hello upstream' } }, '?async=true');
    expect(queued.statusCode).toBe(202);
    const ended = await until('async upstream call ends', async () => {
      const row = await execution(owner.key, queued.json().execution_id);
      return row.status === 'queued' || row.status === 'running' ? undefined : row;
    });
    expect(ended).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: expect.stringContaining('hello upstream') }] } });

    const called = (await mcp(owner.key, { method: 'tools/call', params: { name: 'everything.get-sum', arguments: { a: 1, b: 2 } } })).json().result;
    expect(called.isError).toBeFalsy();
    expect(JSON.stringify(called.content)).toContain('3');
    const badCall = (await mcp(owner.key, { method: 'tools/call', params: { name: 'everything.get-sum', arguments: { a: 'x', b: 2 } } })).json().result;
    expect(badCall).toMatchObject({ isError: true });
    expect(JSON.stringify(badCall.content)).toContain('INVALID_INPUT');
  });

  it('cancels a long upstream call', async () => {
    const owner = await account();
    expect((await register(owner, { name: 'everything', url: reference.server.url })).statusCode).toBe(201);
    const queued = (await invoke(owner.key, 'everything.trigger-long-running-operation', { inputs: { duration: 60, steps: 60 } }, '?async=true')).json();
    await until('the long call runs', async () => ((await execution(owner.key, queued.execution_id)).status === 'running' ? true : undefined));
    const cancelled = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${queued.execution_id}`, key: owner.key });
    expect(cancelled.statusCode).toBeLessThan(300);
    const ended = await until('cancelled', async () => {
      const row = await execution(owner.key, queued.execution_id);
      return row.status === 'running' ? undefined : row;
    }, 10_000);
    expect(ended.status).toBe('cancelled');
  });

  it('needs upstreams:manage; a key narrowed to other tools neither sees nor calls upstream tools', async () => {
    const owner = await account();
    expect((await register(owner, { name: 'everything', url: reference.server.url })).statusCode).toBe(201);
    const reader = await suite.t.createKey(owner.id, { name: 'reader', type: 'service', scopes: ['tools:read', 'tools:invoke'] });
    expect((await register({ id: owner.id, key: reader }, { name: 'other', url: reference.server.url })).statusCode).toBe(403);
    const narrowed = await suite.t.createKey(owner.id, { name: 'narrow', type: 'service', tool_ids: ['json-transform'] });
    expect(await restIds(narrowed)).toEqual(['json-transform']);
    // MCP adds execution.status (docs/mcp.md#execution-status), no tool of the catalogue.
    expect(await mcpNames(narrowed)).toEqual(['execution.status', 'json-transform']);
    expect((await invoke(narrowed, 'everything.get-sum', { a: 1, b: 2 })).statusCode).toBe(403);
    expect((await mcp(narrowed, { method: 'tools/call', params: { name: 'everything.get-sum', arguments: { a: 1, b: 2 } } })).json().error).toMatchObject({ code: -32602 });
  });

  it('switches a tool or the whole upstream off and on, refreshes, deletes', async () => {
    const owner = await account();
    const upstream = (await register(owner, { name: 'everything', url: reference.server.url, tools: { include: ['echo', 'get-sum'] } })).json();
    expect(upstream.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['echo', 'get-sum']);
    const patch = (payload: object) => suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${upstream.id}`, key: owner.key, payload });

    expect((await patch({ tools_enabled: { echo: false } })).json().tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'echo', enabled: false })]));
    await until('echo gone', async () => (!(await restIds(owner.key)).includes('everything.echo') ? true : undefined), 5_000);
    expect(await restIds(owner.key)).toContain('everything.get-sum');
    expect((await invoke(owner.key, 'everything.echo', { message: 'x' })).statusCode).toBe(404);
    expect((await patch({ tools_enabled: { nope: false } })).json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'tools_enabled.nope' } });

    expect((await patch({ enabled: false })).json().enabled).toBe(false);
    await until('every tool gone', async () => (!(await restIds(owner.key)).some((id) => id.startsWith('everything.')) ? true : undefined), 5_000);
    expect((await patch({ enabled: true, tools_enabled: { echo: true } })).statusCode).toBe(200);
    await until('echo back', async () => ((await restIds(owner.key)).includes('everything.echo') ? true : undefined), 5_000);

    const refreshed = await suite.t.request({ method: 'POST', url: `/v1/upstreams/${upstream.id}/refresh`, key: owner.key });
    expect(refreshed.json()).toMatchObject({ status: { tool_count: 2, last_error: null } });
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).statusCode).toBe(204);
    await until('all gone', async () => (!(await restIds(owner.key)).some((id) => id.startsWith('everything.')) ? true : undefined), 5_000);
  });

  it('refuses bad registrations with the envelope, and a URL the egress policy refuses at registration and at call time', async () => {
    const owner = await account();
    const refusedAddress = await register(owner, { name: 'inside', url: `http://127.0.0.2:${reference.server.port}/mcp` });
    expect(refusedAddress.statusCode).toBe(400);
    expect(refusedAddress.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'url' }, message: expect.stringContaining('refused address') });
    for (const [body, parameter] of [
      [{ name: 'Bad Name', url: reference.server.url }, 'name'],
      [{ name: 'workflow', url: reference.server.url }, 'name'],
      [{ name: 'execution', url: reference.server.url }, 'name'],
      [{ name: 'ok', url: reference.server.url, auth: { bearer_secret_name: 'x', none: true } }, 'auth'],
      [{ name: 'ok', url: 'ftp://127.0.0.1/mcp' }, 'url'],
      [{ name: 'ok', url: reference.server.url, transport: 'sse' }, 'transport'],
    ] as const) {
      const res = await register(owner, body);
      expect(res.statusCode).toBe(400);
      expect(JSON.stringify(res.json().error)).toContain(parameter);
    }
    // stdio is the operator's alone (test/upstreams-stdio.e2e-spec.ts).
    expect((await register(owner, { name: 'ok', url: reference.server.url, transport: 'stdio' })).json().error).toMatchObject({ code: 'FORBIDDEN', details: { parameter: 'transport' } });

    // A bearer secret not set yet: registered, its error shown, never a secret's value.
    const unset = (await register(owner, { name: 'locked', url: reference.server.url, auth: { bearer_secret_name: 'EVERYTHING_TOKEN' } })).json();
    expect(unset).toMatchObject({ auth: { bearer_secret_name: 'EVERYTHING_TOKEN' }, status: { tool_count: 0, last_error: expect.stringContaining('EVERYTHING_TOKEN') } });
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/EVERYTHING_TOKEN', key: owner.key, payload: { value: 'tok-very-secret' } })).statusCode).toBeLessThan(300);
    const refreshed = (await suite.t.request({ method: 'POST', url: `/v1/upstreams/${unset.id}/refresh`, key: owner.key })).json();
    expect(refreshed.status).toMatchObject({ last_error: null });
    expect(JSON.stringify(refreshed)).not.toContain('tok-very-secret');
    expect((await invoke(owner.key, 'locked.get-sum', { a: 1, b: 1 })).json()).toMatchObject({ status: 'success' });

    // Registered where the policy allowed it, then pointed at a refused address (as a changed
    // EGRESS_ALLOW would leave it): the call is refused at the address check, nothing connects.
    await suite.t.app.get(DataSource).query(`UPDATE upstreams SET url = $1 WHERE id = $2`, [`http://127.0.0.2:${reference.server.port}/mcp`, unset.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the catalogue's one-second reuse
    const atCall = (await invoke(owner.key, 'locked.get-sum', { a: 1, b: 1 })).json();
    expect(atCall).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('egress policy refuses') } });
    const refresh = (await suite.t.request({ method: 'POST', url: `/v1/upstreams/${unset.id}/refresh`, key: owner.key })).json();
    expect(refresh.status.last_error).toContain('egress policy refuses');
  });
});
