/**
 * An upstream's own `tools/list_changed` (docs/upstreams.md#staying-current), on both engines: the
 * service keeps a connection to each MCP upstream over HTTP that declares it — a 2026-07-28
 * `subscriptions/listen` to an SDK v2 server, the 2025-11-25 session's event stream of an SDK v1
 * server — and a tool the upstream adds while running is in the catalogue and callable within
 * seconds, long before UPSTREAM_REFRESH_SECONDS (an hour here). Switching the upstream off closes
 * the watch.
 */
import { randomBytes } from 'node:crypto';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { startChangingServer, type ChangingMcpServer } from './support/sdk-mcp-servers';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', UPSTREAM_REFRESH_SECONDS: '3600' };

describeEachEngine('Upstreams heard changing their tools', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  const servers: ChangingMcpServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  const toolIds = async (key: string) => (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key })).json().tools.map((tool: { id: string }) => tool.id) as string[];

  it.each([
    ['2026-07-28, SDK v2 (subscriptions/listen)', 'modern'],
    ['2025-11-25, SDK v1 (the session event stream)', 'legacy'],
  ] as const)('serves a tool the upstream adds while running, heard over %s', async (_, era) => {
    const server = await startChangingServer(era);
    servers.push(server);
    const owner = await suite.t.createAccount(`changing-${era}`);
    const name = `changing-${era}`;
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { name, url: server.url, transport: 'streamable-http', auth: { none: true } } });
    expect(registered.statusCode).toBe(201);
    expect(await toolIds(owner.key)).toContain(`${name}.add`);
    await until('the watch open', async () => (server.streams() > 0 ? true : undefined), 15_000);

    server.addTool('multiply');
    await until('the added tool in the catalogue', async () => ((await toolIds(owner.key)).includes(`${name}.multiply`) ? true : undefined), 10_000, 100);
    const called = await suite.t.request({ method: 'POST', url: `/v1/tools/${name}.multiply/invoke`, key: owner.key, payload: {} });
    expect(called.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'multiply ran' }] } });

    // Off: the service stops listening to it (a kept call session may hold a stream of its own a while).
    const open = server.streams();
    expect((await suite.t.request({ method: 'PATCH', url: `/v1/upstreams/${registered.json().id}`, key: owner.key, payload: { enabled: false } })).statusCode).toBe(200);
    await until('the watch closed', async () => (server.streams() === open - 1 ? true : undefined), 15_000);
  }, 60_000);
});
