import { runTool, toolFailure } from '@tos/sdk/testing';
import { startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { cancelDuring } from '../../../test/support/forge/cancel';
import { ForgeClients } from '../../integrations/forge';
import { VcsWorkflowStatusTool } from './vcs-workflow-status.tool';

interface Status {
  workflow: { id: number; name: string; path: string; state: string };
  runs: Array<{ id: number; run_number: number; status: string; conclusion: string | null; event: string; branch: string; duration_seconds: number | null }>;
  count: number;
  total_count: number;
  latest_conclusion: string | null;
  latest_completed_at: string | null;
}

describe('vcs-workflow-status', () => {
  let world: StartedForge;
  const tool = new VcsWorkflowStatusTool(new ForgeClients());
  const status = (input: Record<string, unknown>, overrides: Parameters<typeof runTool>[2] = {}) =>
    runTool<Status>(tool, { owner: 'acme', repo: 'widgets', workflow: 'ci.yml', ...input }, { config: world.config, ...overrides });

  beforeAll(async () => {
    world = await startForge();
  });
  afterAll(() => stopForge(world));

  it('reports the latest runs newest first, with outcome, timings and the latest completed conclusion', async () => {
    const out = await status({});
    expect(out.workflow).toMatchObject({ id: world.data.ci.id, name: 'CI', path: '.github/workflows/ci.yml', state: 'active' });
    expect(out.runs.map((r) => r.run_number)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(out.runs[0]).toMatchObject({ status: 'in_progress', conclusion: null, duration_seconds: null, branch: 'main', event: 'push' });
    expect(out.runs[1]).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      branch: 'retry-webhooks',
      event: 'pull_request',
      duration_seconds: 360,
      created_at: '2025-03-03T08:31:00.000Z',
      run_started_at: '2025-03-03T08:31:10.000Z',
      updated_at: '2025-03-03T08:37:10.000Z',
      html_url: `${new URL(world.forge.url).origin}/acme/widgets/actions/runs/${out.runs[1].id}`,
    });
    expect(out).toMatchObject({ count: 6, total_count: 6, latest_conclusion: 'failure', latest_completed_at: '2025-03-03T08:37:10.000Z' });
  });

  it('accepts the workflow id as well as its file name', async () => {
    const byId = await status({ workflow: String(world.data.ci.id), limit: 2 });
    expect(byId.runs.map((r) => r.run_number)).toEqual([6, 5]);
    expect(byId).toMatchObject({ count: 2, total_count: 6 });
  });

  it('filters by branch, status and event', async () => {
    expect((await status({ branch: 'main' })).runs.map((r) => r.run_number)).toEqual([6, 3, 1]);
    expect((await status({ status: 'failure' })).runs.map((r) => r.run_number)).toEqual([5, 2]);
    expect((await status({ event: 'pull_request', status: 'completed' })).runs.map((r) => r.run_number)).toEqual([5, 4, 2]);
    expect(await status({ branch: 'no-such-branch' })).toMatchObject({ runs: [], count: 0, total_count: 0, latest_conclusion: null, latest_completed_at: null });
  });

  it('refuses bad input naming the parameter', async () => {
    for (const [input, parameter] of [
      [{ workflow: 'ci' }, 'workflow'],
      [{ workflow: '../ci.yml' }, 'workflow'],
      [{ limit: 101 }, 'limit'],
      [{ status: 'green' }, 'status'],
      [{ event: 'Push!' }, 'event'],
      [{ branch: 'feature branch' }, 'branch'],
    ] as const) {
      expect(await toolFailure(status(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    }
  });

  it('names the workflow or the repository a 404 is about', async () => {
    expect(await toolFailure(status({ workflow: 'release.yml' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workflow', received: 'release.yml' } });
    expect(await toolFailure(status({ repo: 'gadgets' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'repo' } });
  });

  it('maps a failing forge to a retryable TOOL_ERROR', async () => {
    world.forge.fail({ operationId: 'actions/list-workflow-runs', status: 503, headers: { 'retry-after': '5' } });
    expect(await toolFailure(status({}))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retryAfter: 5, details: { upstream: { status: 503 } } });
  });

  it('stops at once when cancelled mid-request', async () => {
    const { error, settledMs, abandoned } = await cancelDuring(world.forge, 'actions/list-workflow-runs', (signal) => status({}, { signal }));
    expect(error).toEqual(new Error('cancelled by the caller'));
    expect(settledMs).toBeLessThan(1000);
    expect(abandoned).toBe(true);
  });

  it('refuses a forge on a loopback address through the egress policy', async () => {
    expect(await toolFailure(status({}, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FORGE_API_URL' } });
  });
});
