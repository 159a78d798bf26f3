import { runTool, toolFailure } from '@tos/sdk/testing';
import { startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { cancelDuring } from '../../../test/support/forge/cancel';
import { ForgeClients } from '../../integrations/forge';
import { VcsGetPrTool } from './vcs-get-pr.tool';

interface PrDetails {
  pr: Record<string, unknown>;
  files: Array<{ filename: string; status: string; additions: number; deletions: number; changes: number }>;
  files_truncated: boolean;
  reviews: Array<{ author: string; state: string }>;
  review_summary: { approved: string[]; changes_requested: string[]; requested: string[] };
  checks: { state: string; runs: Array<{ name: string; conclusion: string | null }>; statuses: Array<{ context: string; state: string }> };
}

describe('vcs-get-pr', () => {
  let world: StartedForge;
  const tool = new VcsGetPrTool(new ForgeClients());
  const get = (input: Record<string, unknown>, overrides: Parameters<typeof runTool>[2] = {}) =>
    runTool<PrDetails>(tool, { owner: 'acme', repo: 'widgets', ...input }, { config: world.config, ...overrides });

  beforeAll(async () => {
    world = await startForge();
  });
  afterAll(() => stopForge(world));

  it('reads a pull request with its files, reviews and checks', async () => {
    const out = await get({ pull_number: 1 });
    const retry = world.data.pulls[0];
    expect(out.pr).toEqual({
      id: retry.id,
      number: 1,
      title: 'Add retries to the webhook client',
      body: 'Retries 5xx and network errors with backoff.',
      author: 'ada',
      state: 'open',
      draft: false,
      merged: false,
      merged_by: null,
      mergeable: true,
      mergeable_state: 'blocked',
      html_url: `${world.forge.url}/acme/widgets/pull/1`,
      created_at: '2025-03-01T10:00:00.000Z',
      updated_at: '2025-03-03T08:30:00.000Z',
      closed_at: null,
      merged_at: null,
      head: { ref: 'retry-webhooks', sha: retry.head.sha, repo: 'acme/widgets' },
      base: { ref: 'main', sha: retry.base.sha },
      labels: ['enhancement'],
      requested_reviewers: ['linus'],
      commits: 3,
      additions: 131,
      deletions: 9,
      changed_files: 3,
      comments: 2,
      review_comments: 0,
    });
    expect(out.files).toEqual([
      { filename: 'src/webhooks/client.ts', status: 'modified', additions: 42, deletions: 7, changes: 49 },
      { filename: 'src/webhooks/backoff.ts', status: 'added', additions: 31, deletions: 0, changes: 31 },
      { filename: 'test/webhooks/client.spec.ts', status: 'modified', additions: 58, deletions: 2, changes: 60 },
    ]);
    expect(out.files_truncated).toBe(false);
    expect(out.reviews.map((r) => [r.author, r.state])).toEqual([
      ['grace', 'COMMENTED'],
      ['grace', 'APPROVED'],
      ['linus', 'CHANGES_REQUESTED'],
    ]);
    expect(out.review_summary).toEqual({ approved: ['grace'], changes_requested: ['linus'], requested: ['linus'] });
    expect(out.checks.state).toBe('failure');
    expect(out.checks.runs.map((r) => [r.name, r.conclusion]).sort()).toEqual([
      ['build', 'success'],
      ['test', 'failure'],
    ]);
    expect(out.checks.statuses).toEqual([{ context: 'coverage/codecov', state: 'success', description: '91.2% (+0.4%)' }]);
  });

  it('reports a merged pull request, a dismissed review and pending checks', async () => {
    const merged = await get({ pull_number: 3 });
    expect(merged.pr).toMatchObject({ state: 'closed', merged: true, merged_by: 'grace', merged_at: '2025-02-21T11:00:00.000Z' });
    expect(merged.checks).toEqual({ state: 'none', runs: [], statuses: [] });

    const { model } = world.forge;
    const pull = world.data.pulls[1];
    model.addReview(pull, { user: 'linus', state: 'CHANGES_REQUESTED', submitted_at: '2025-03-02T17:00:00Z' });
    model.addReview(pull, { user: 'linus', state: 'DISMISSED', submitted_at: '2025-03-02T18:00:00Z' });
    model.addReview(pull, { user: 'ada', state: 'PENDING', submitted_at: '2025-03-02T19:00:00Z' });
    model.addCheckRun(pull.repo, { head_sha: pull.head.sha, name: 'build', status: 'in_progress', conclusion: null, completed_at: null });
    const draft = await get({ pull_number: 2 });
    expect(draft.reviews.map((r) => r.state)).toEqual(['CHANGES_REQUESTED', 'DISMISSED']);
    expect(draft.review_summary).toEqual({ approved: [], changes_requested: [], requested: [] });
    expect(draft.checks.state).toBe('pending');
  });

  it('reads again while the forge still computes mergeability', async () => {
    const pull = world.data.pulls[1];
    pull.mergeability_pending_reads = 1;
    const before = world.forge.calls('pulls/get').length;
    const out = await get({ pull_number: 2 }, { config: world.config });
    expect(out.pr).toMatchObject({ mergeable: true, mergeable_state: 'draft' });
    expect(world.forge.calls('pulls/get').length - before).toBe(2);
  });

  it('pages through the changed files up to max_files', async () => {
    const { model } = world.forge;
    const huge = model.addPull(world.data.repo, {
      title: 'Reformat everything',
      user: 'linus',
      files: Array.from({ length: 250 }, (_, i) => ({ filename: `src/file-${String(i).padStart(3, '0')}.ts`, status: 'modified' as const, additions: 1, deletions: 1 })),
    });
    const some = await get({ pull_number: huge.number, max_files: 120 });
    expect(some.files).toHaveLength(120);
    expect(some.files[119].filename).toBe('src/file-119.ts');
    expect(some.files_truncated).toBe(true);
    const all = await get({ pull_number: huge.number, max_files: 3000 });
    expect(all.files).toHaveLength(250);
    expect(all.files_truncated).toBe(false);
    const none = await get({ pull_number: huge.number, max_files: 0 });
    expect(none).toMatchObject({ files: [], files_truncated: true });
  });

  it('refuses bad input naming the parameter', async () => {
    expect(await toolFailure(get({ pull_number: 0 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'pull_number' } });
    expect(await toolFailure(get({ pull_number: 'one' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'pull_number' } });
    expect(await toolFailure(get({ pull_number: 1, max_files: 3001 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'max_files' } });
    expect(await toolFailure(get({}))).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('pull_number') });
  });

  it('names the pull request, the repository or the owner a 404 is about', async () => {
    expect(await toolFailure(get({ pull_number: 999 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'pull_number', received: 999 } });
    expect(await toolFailure(get({ repo: 'gadgets', pull_number: 1 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'repo' } });
    expect(await toolFailure(get({ owner: 'nobody', pull_number: 1 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'owner' } });
  });

  it('maps a failing forge to a retryable TOOL_ERROR', async () => {
    world.forge.fail({ operationId: 'checks/list-for-ref', status: 500 });
    expect(await toolFailure(get({ pull_number: 1 }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { service: 'forge', status: 500 } } });
  });

  it('stops at once when cancelled mid-request', async () => {
    const { error, settledMs, abandoned } = await cancelDuring(world.forge, 'pulls/list-files', (signal) => get({ pull_number: 1 }, { signal }));
    expect(error).toEqual(new Error('cancelled by the caller'));
    expect(settledMs).toBeLessThan(1000);
    expect(abandoned).toBe(true);
  });

  it('stops while waiting for mergeability when cancelled', async () => {
    world.data.pulls[1].mergeability_pending_reads = 10;
    const controller = new AbortController();
    const call = get({ pull_number: 2 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by the caller')), 300);
    const started = performance.now();
    await expect(call).rejects.toThrow('cancelled by the caller');
    expect(performance.now() - started).toBeLessThan(1000);
    world.data.pulls[1].mergeability_pending_reads = 0;
  });

  it('refuses a forge on a loopback address through the egress policy', async () => {
    expect(await toolFailure(get({ pull_number: 1 }, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FORGE_API_URL' } });
  });
});
