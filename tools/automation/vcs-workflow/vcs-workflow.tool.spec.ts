import { runTool, toolFailure } from '@tos/sdk/testing';
import { startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { cancelDuring } from '../../../test/support/forge/cancel';
import { ForgeClients } from '../../integrations/forge';
import { VcsWorkflowTool } from './vcs-workflow.tool';

interface Dispatched {
  dispatched: boolean;
  workflow: string;
  ref: string;
  found: boolean;
  run: { id: number; run_number: number; status: string; event: string; branch: string; head_sha: string; actor: string; html_url: string } | null;
}

const OUTSIDER_TOKEN = 'ghp_outsider';

describe('vcs-workflow', () => {
  /** Like github.com: the dispatch answer names the run. */
  let cloud: StartedForge;
  /** Like an Enterprise Server: 204, and the run appears a moment later. */
  let server: StartedForge;
  const tool = new VcsWorkflowTool(new ForgeClients());
  const dispatch = (on: StartedForge, input: Record<string, unknown>, overrides: Parameters<typeof runTool>[2] = {}) =>
    runTool<Dispatched>(tool, { owner: 'acme', repo: 'widgets', workflow: 'deploy.yml', workflow_inputs: { environment: 'staging' }, ...input }, { config: on.config, ...overrides });

  beforeAll(async () => {
    cloud = await startForge({ tokens: { [OUTSIDER_TOKEN]: 'mallory' } });
    server = await startForge({ pathPrefix: '/api/v3', dispatchReturnsRunDetails: false, runCreationDelayMs: 1200 });
  });
  afterAll(async () => {
    await stopForge(cloud);
    await stopForge(server);
  });

  it('dispatches and reports the run the forge names (return_run_details)', async () => {
    const out = await dispatch(cloud, { ref: 'main', workflow_inputs: { environment: 'staging', version: '1.4.2' } });
    const run = cloud.forge.model.runs.at(-1)!;
    expect(run).toMatchObject({ event: 'workflow_dispatch', head_branch: 'main', actor: 'tos-bot', inputs: { environment: 'staging', version: '1.4.2' } });
    expect(out).toEqual({
      dispatched: true,
      workflow: 'deploy.yml',
      ref: 'main',
      found: true,
      run: {
        id: run.id,
        run_number: run.run_number,
        status: 'queued',
        conclusion: null,
        event: 'workflow_dispatch',
        branch: 'main',
        head_sha: cloud.data.repo.branches.get('main'),
        actor: 'tos-bot',
        html_url: `${new URL(cloud.forge.url).origin}/acme/widgets/actions/runs/${run.id}`,
        created_at: new Date(run.created_at).toISOString(),
      },
    });
  });

  it("finds the run by polling when the forge answers 204, on the repository's default branch when no ref is given", async () => {
    const progress: Array<[number, string | undefined]> = [];
    const others = server.forge.model.runs.length;
    const out = await dispatch(server, {}, { onProgress: (pct, message) => progress.push([pct, message]) });
    const started = server.forge.model.runs.slice(others);
    expect(started).toHaveLength(1);
    expect(out).toMatchObject({ found: true, ref: 'main', run: { id: started[0].id, branch: 'main', status: 'queued' } });
    expect(progress.map(([pct]) => pct)).toEqual([...progress.map(([pct]) => pct)].sort((a, b) => a - b));
    expect(progress.some(([, message]) => message === 'waiting for the run to appear')).toBe(true);
    // Polls revalidate: the look that found nothing new was a 304, free of rate-limit budget.
    expect(server.forge.calls('actions/list-workflow-runs').some((r) => r.status === 304)).toBe(true);
  });

  it('tells its run from runs that existed before, and from runs on other branches', async () => {
    const before = await dispatch(server, { ref: 'refs/heads/release/1.x' });
    expect(before).toMatchObject({ found: true, ref: 'refs/heads/release/1.x', run: { branch: 'release/1.x' } });
    const tagged = await dispatch(server, { ref: 'v1.0.0' });
    expect(tagged.run!.branch).toBe('v1.0.0');
    expect(tagged.run!.id).not.toBe(before.run!.id);
  });

  it('reports found: false when the run does not appear within wait_seconds, and does not wait with 0', async () => {
    const slow = await startForge({ dispatchReturnsRunDetails: false, runCreationDelayMs: 60_000 });
    try {
      const started = performance.now();
      expect(await dispatch(slow, { ref: 'main', wait_seconds: 2 })).toEqual({ dispatched: true, workflow: 'deploy.yml', ref: 'main', found: false, run: null });
      expect(performance.now() - started).toBeGreaterThan(1900);
      const quick = performance.now();
      expect(await dispatch(slow, { ref: 'main', wait_seconds: 0 })).toMatchObject({ dispatched: true, found: false, run: null });
      expect(performance.now() - quick).toBeLessThan(1000);
    } finally {
      await stopForge(slow);
    }
  });

  it("turns the forge's 422s into INVALID_INPUT naming the ref, the workflow inputs or the workflow", async () => {
    expect(await toolFailure(dispatch(cloud, { ref: 'no-such-branch' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'ref' }, message: expect.stringContaining('No ref found for: no-such-branch') });
    expect(await toolFailure(dispatch(cloud, { workflow_inputs: { environment: 'prod', force: true } }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workflow_inputs' }, message: expect.stringContaining('Unexpected inputs provided') });
    expect(await toolFailure(dispatch(cloud, { workflow_inputs: {} }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workflow_inputs' }, message: expect.stringContaining("Required input 'environment'") });
    expect(await toolFailure(dispatch(cloud, { workflow: 'ci.yml' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workflow' }, message: expect.stringContaining('workflow_dispatch') });
    expect(await toolFailure(dispatch(cloud, { workflow: 'release.yml' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workflow' } });
  });

  it('refuses bad input naming the parameter', async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`input_${i}`, 'x']));
    for (const [input, parameter] of [
      [{ workflow_inputs: tooMany }, 'workflow_inputs'],
      [{ workflow_inputs: { environment: { nested: true } } }, 'workflow_inputs.environment'],
      [{ workflow_inputs: { environment: 'x'.repeat(1025) } }, 'workflow_inputs.environment'],
      [{ ref: 'has space' }, 'ref'],
      [{ wait_seconds: 121 }, 'wait_seconds'],
      [{ workflow: 'deploy' }, 'workflow'],
    ] as const) {
      expect(await toolFailure(dispatch(cloud, input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    }
  });

  it('needs a token, says how to set one, and reports a token without permission as not retryable', async () => {
    const missing = await toolFailure(dispatch(cloud, {}, { config: { FORGE_API_URL: cloud.forge.url } }));
    expect(missing).toMatchObject({ code: 'TOOL_ERROR', retryable: false, suggestion: expect.stringContaining('PUT /v1/secrets/FORGE_TOKEN') });
    const outsider = await toolFailure(dispatch(cloud, { ref: 'main' }, { secrets: { FORGE_TOKEN: OUTSIDER_TOKEN } }));
    expect(outsider).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { status: 403 } } });
  });

  it('maps a failing forge to a retryable TOOL_ERROR', async () => {
    cloud.forge.fail({ operationId: 'actions/create-workflow-dispatch', status: 502 });
    expect(await toolFailure(dispatch(cloud, { ref: 'main' }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { status: 502 } } });
  });

  it('stops at once when cancelled mid-request, and while waiting for the run', async () => {
    const midRequest = await cancelDuring(cloud.forge, 'actions/create-workflow-dispatch', (signal) => dispatch(cloud, { ref: 'main' }, { signal }));
    expect(midRequest.error).toEqual(new Error('cancelled by the caller'));
    expect(midRequest.settledMs).toBeLessThan(1000);
    expect(midRequest.abandoned).toBe(true);

    const controller = new AbortController();
    const waiting = dispatch(server, { ref: 'main', wait_seconds: 60 }, { signal: controller.signal, onProgress: (_pct, message) => message === 'dispatched' && setTimeout(() => controller.abort(new Error('cancelled by the caller')), 100) });
    const started = performance.now();
    await expect(waiting).rejects.toThrow('cancelled by the caller');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses a forge on a loopback address through the egress policy', async () => {
    expect(await toolFailure(dispatch(cloud, { ref: 'main' }, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FORGE_API_URL' } });
  });
});
