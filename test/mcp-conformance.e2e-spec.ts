/**
 * The official MCP conformance suite against the listening service: the scenarios the 2026-07-28
 * revision requires (`--requirements 2026-07-28`) and the default active suite (the 2025
 * revisions), with the suite's fixture tools, resources and prompts from a test-only extension
 * module, and a federated upstream's tools beside them in the catalogue (the reference server
 * as `everything.*`, docs/upstreams.md). A scenario that fails must be listed, with its reason, in
 * the baseline beside it; one that passes must not be (the suite fails on a stale entry too).
 */
import * as path from 'node:path';
import { useTestApp } from './support/app';
import { authorizingProxy, ensureConformanceSuite, runConformance } from './support/conformance';
import { DATABASE_MODES } from './support/databases';
import { useEverything } from './support/everything-server';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const baseline = (revision: string) => path.join(__dirname, 'conformance', `baseline.${revision}.yml`);

describe('MCP conformance suite', () => {
  const suite = useTestApp(DATABASE_MODES[0], { extensions: [ConformanceFixturesModule], env: { EGRESS_ALLOW: '127.0.0.1' } });
  const reference = useEverything();
  let proxy: { url: string; close(): Promise<void> };

  // The suite and its Node 22 are installed here, on first use: `npm install` leaves them out.
  beforeAll(() => ensureConformanceSuite(), 600_000);
  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    proxy = await authorizingProxy((await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1'), suite.acme.key);
    const upstream = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: suite.acme.key, payload: { name: 'everything', transport: 'streamable-http', url: reference.server.url, auth: { none: true } } });
    expect(upstream.json()).toMatchObject({ status: { last_error: null } });
    expect(upstream.json().status.tool_count).toBeGreaterThan(5);
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key: suite.acme.key })).json().tools.map((tool: { id: string }) => tool.id);
    expect(listed).toContain('everything.echo');
  });
  afterAll(() => proxy?.close());

  it.each([
    ['2026-07-28 requirements', ['--requirements', '2026-07-28'], baseline('2026-07-28')],
    ['default active suite (2025 revisions)', ['--suite', 'active'], baseline('2025-11-25')],
  ])('passes the %s, but for its baseline', async (_, selection, expectedFailures) => {
    const run = await runConformance(`${proxy.url}/v1/mcp`, selection, expectedFailures);
    // The suite's own verdict: a failure outside the baseline, or a baseline entry that passes, exits 1.
    expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({ code: 0, output: '' });
    expect(run.scenarios.filter(({ passed }) => passed > 0).length).toBeGreaterThan(0);
  }, 120_000);
});
