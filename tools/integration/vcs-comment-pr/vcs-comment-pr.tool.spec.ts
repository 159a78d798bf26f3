import { runTool, toolFailure } from '@tos/sdk/testing';
import { EXAMPLE_MARKER, startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { cancelDuring } from '../../../test/support/forge/cancel';
import { ForgeClients } from '../../integrations/forge';
import { markerLine, VcsCommentPrTool } from './vcs-comment-pr.tool';

interface Commented {
  action: 'created' | 'updated';
  comment_id: number;
  html_url: string;
  marker: string | null;
}

describe('vcs-comment-pr', () => {
  let world: StartedForge;
  const tool = new VcsCommentPrTool(new ForgeClients());
  const comment = (input: Record<string, unknown>, overrides: Parameters<typeof runTool>[2] = {}) =>
    runTool<Commented>(tool, { owner: 'acme', repo: 'widgets', pull_number: 1, body: 'Looks good', ...input }, { config: world.config, ...overrides });
  const stored = (id: number) => world.forge.model.comments.find((c) => c.id === id)!;
  const carrying = (marker: string) => world.forge.model.comments.filter((c) => c.body.includes(markerLine(marker)));

  beforeAll(async () => {
    world = await startForge();
  });
  afterAll(() => stopForge(world));

  it('creates a comment without a marker', async () => {
    const out = await comment({ body: 'Deployed to **staging**.' });
    expect(out).toEqual({ action: 'created', comment_id: out.comment_id, html_url: `${new URL(world.forge.url).origin}/acme/widgets/pull/1#issuecomment-${out.comment_id}`, marker: null });
    expect(stored(out.comment_id)).toMatchObject({ body: 'Deployed to **staging**.', user: 'tos-bot', issue_number: 1 });
  });

  it('with a marker creates once, then edits that comment instead of adding another', async () => {
    const first = await comment({ body: 'Build 1: passing', marker: 'build-status' });
    expect(first.action).toBe('created');
    expect(stored(first.comment_id).body).toBe(`Build 1: passing\n\n${markerLine('build-status')}`);
    const second = await comment({ body: 'Build 2: failing', marker: 'build-status' });
    expect(second).toMatchObject({ action: 'updated', comment_id: first.comment_id, marker: 'build-status' });
    expect(carrying('build-status')).toHaveLength(1);
    expect(stored(first.comment_id).body).toBe(`Build 2: failing\n\n${markerLine('build-status')}`);
    // Another marker, or another pull request, is another comment.
    expect((await comment({ marker: 'lint-status' })).action).toBe('created');
    expect((await comment({ pull_number: 2, marker: 'build-status' })).action).toBe('created');
  });

  it('finds a marked comment deep in a long thread, reading only the pages it needs', async () => {
    const { model } = world.forge;
    const thread = model.addPull(world.data.repo, { title: 'Long discussion', user: 'ada' });
    for (let i = 0; i < 250; i++) model.addComment(world.data.repo, thread.number, { user: i % 2 ? 'ada' : 'grace', body: `Comment ${i}` });
    const marked = model.addComment(world.data.repo, thread.number, { user: 'tos-bot', body: `Old\n${markerLine('perf')}` });
    for (let i = 0; i < 120; i++) model.addComment(world.data.repo, thread.number, { user: 'ada', body: `Later ${i}` });
    const before = world.forge.calls('issues/list-comments').length;
    const out = await comment({ pull_number: thread.number, body: 'p95 210 ms', marker: 'perf' });
    expect(out).toMatchObject({ action: 'updated', comment_id: marked.id });
    expect(world.forge.calls('issues/list-comments').length - before).toBe(3);
    // A marker nobody used in the whole thread: every page read, then one new comment.
    expect((await comment({ pull_number: thread.number, marker: 'absent' })).action).toBe('created');
  });

  it('refuses to guess in a thread longer than it searches, rather than risk a duplicate', async () => {
    const { model } = world.forge;
    const huge = model.addPull(world.data.repo, { title: 'Endless', user: 'ada' });
    for (let i = 0; i < 3001; i++) model.addComment(world.data.repo, huge.number, { user: 'ada', body: `+1 (${i})` });
    const failure = await toolFailure(comment({ pull_number: huge.number, marker: 'summary' }));
    expect(failure).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { marker: 'summary' } });
    expect(carrying('summary')).toHaveLength(0);
  });

  it("updates the example's seeded marker comment", async () => {
    const [seeded] = carrying(EXAMPLE_MARKER);
    const out = await comment({ body: 'Coverage: 91.2% (+0.4%)', marker: EXAMPLE_MARKER });
    expect(out).toMatchObject({ action: 'updated', comment_id: seeded.id });
  });

  it("cannot edit someone else's comment carrying the marker: a non-retryable 403", async () => {
    world.forge.model.addComment(world.data.repo, 2, { user: 'ada', body: `Planted\n${markerLine('planted')}` });
    expect(await toolFailure(comment({ pull_number: 2, marker: 'planted' }))).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { status: 403 } } });
  });

  it('refuses bad input naming the parameter', async () => {
    for (const [input, parameter] of [
      [{ body: '' }, 'body'],
      [{ body: 'x'.repeat(65_001) }, 'body'],
      [{ marker: 'a -->' }, 'marker'],
      [{ marker: '-leading' }, 'marker'],
      [{ marker: 'x'.repeat(65) }, 'marker'],
      [{ pull_number: -1 }, 'pull_number'],
    ] as const) {
      expect(await toolFailure(comment(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    }
  });

  it('names the pull request a 404 is about, and needs a token', async () => {
    expect(await toolFailure(comment({ pull_number: 404 }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'pull_number', received: 404 } });
    const missing = await toolFailure(comment({}, { config: { FORGE_API_URL: world.forge.url } }));
    expect(missing).toMatchObject({ code: 'TOOL_ERROR', retryable: false, suggestion: expect.stringContaining('FORGE_TOKEN') });
  });

  it('maps a failing forge to a retryable TOOL_ERROR', async () => {
    world.forge.fail({ operationId: 'issues/create-comment', status: 500 });
    expect(await toolFailure(comment({}))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { status: 500 } } });
  });

  it('stops at once when cancelled mid-search', async () => {
    const { error, settledMs, abandoned } = await cancelDuring(world.forge, 'issues/list-comments', (signal) => comment({ marker: 'build-status' }, { signal }));
    expect(error).toEqual(new Error('cancelled by the caller'));
    expect(settledMs).toBeLessThan(1000);
    expect(abandoned).toBe(true);
  });

  it('refuses a forge on a loopback address through the egress policy', async () => {
    expect(await toolFailure(comment({}, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FORGE_API_URL' } });
  });
});
