import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { cancelDuring } from '../../../test/support/forge/cancel';
import { ForgeClients } from '../../integrations/forge';
import { VcsListPrsTool } from './vcs-list-prs.tool';

const ADA_TOKEN = 'ghp_adaOwnToken';

interface ListedPrs {
  prs: Array<Record<string, unknown> & { number: number; title: string; state: string; created_at: string }>;
  count: number;
  has_more: boolean;
}

describe('vcs-list-prs', () => {
  let world: StartedForge;
  let clients: ForgeClients;
  let tool: VcsListPrsTool;
  const list = (input: Record<string, unknown>, overrides: Parameters<typeof runTool>[2] = {}) =>
    runTool<ListedPrs>(tool, { owner: 'acme', repo: 'widgets', ...input }, { config: world.config, ...overrides });

  beforeAll(async () => {
    world = await startForge({ tokens: { [ADA_TOKEN]: 'ada' } });
    // 250 pull requests in one repository, for paging.
    const busy = world.forge.model.addRepo('acme', 'monorepo');
    for (let i = 1; i <= 250; i++) world.forge.model.addPull(busy, { title: `Change ${i}`, user: 'ada', created_at: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString() });
    const plans = world.forge.model.addRepo('acme', 'secret-plans', { private: true, collaborators: new Set(['ada']) });
    world.forge.model.addPull(plans, { title: 'World domination, phase 2', user: 'ada' });
  });
  beforeEach(() => {
    clients = new ForgeClients();
    tool = new VcsListPrsTool(clients);
  });
  afterAll(() => stopForge(world));

  it('lists the open pull requests, newest first, in the documented shape with ISO 8601 UTC times', async () => {
    const out = await list({});
    expect(out.count).toBe(2);
    expect(out.has_more).toBe(false);
    expect(out.prs.map((pr) => pr.number)).toEqual([2, 1]);
    expect(out.prs[1]).toEqual({
      id: world.data.pulls[0].id,
      number: 1,
      title: 'Add retries to the webhook client',
      author: 'ada',
      state: 'open',
      draft: false,
      merged: false,
      created_at: '2025-03-01T10:00:00.000Z',
      updated_at: '2025-03-03T08:30:00.000Z',
      html_url: `${world.forge.url}/acme/widgets/pull/1`,
      head: 'retry-webhooks',
      base: 'main',
      labels: ['enhancement'],
    });
    expect(out.prs[0]).toMatchObject({ draft: true, author: 'grace' });
  });

  it('filters by state, base and head, and sorts as asked', async () => {
    const closed = await list({ state: 'closed' });
    expect(closed.prs.map((pr) => [pr.number, pr.state, pr.merged])).toEqual([
      [3, 'closed', true],
      [4, 'closed', false],
    ]);
    expect((await list({ state: 'all', sort: 'updated', direction: 'desc' })).prs.map((pr) => pr.number)).toEqual([1, 2, 3, 4]);
    expect((await list({ state: 'all', direction: 'asc' })).prs.map((pr) => pr.number)).toEqual([4, 3, 1, 2]);
    expect((await list({ state: 'all', head: 'bump-undici' })).prs.map((pr) => pr.number)).toEqual([3]);
    expect((await list({ state: 'all', head: 'acme:drop-node-18' })).prs.map((pr) => pr.number)).toEqual([4]);
    expect((await list({ base: 'release/1.x' })).count).toBe(0);
    expect(world.forge.calls('pulls/list').at(-1)!.path).toContain('base=release%2F1.x');
  });

  it('follows Link pagination up to the limit and says when more exist', async () => {
    const before = world.forge.calls('pulls/list').length;
    const out = await list({ repo: 'monorepo', limit: 230 });
    expect(out.count).toBe(230);
    expect(out.has_more).toBe(true);
    expect(out.prs[0].title).toBe('Change 250');
    expect(out.prs[229].title).toBe('Change 21');
    expect(new Set(out.prs.map((pr) => pr.number)).size).toBe(230);
    const pages = world.forge.calls('pulls/list').slice(before);
    expect(pages.map((r) => new URL(r.path, 'http://x').searchParams.get('page') ?? '1')).toEqual(['1', '2', '3']);

    const all = await list({ repo: 'monorepo', limit: 1000 });
    expect(all).toMatchObject({ count: 250, has_more: false });
    const exact = await list({ repo: 'monorepo', limit: 100 });
    expect(exact).toMatchObject({ count: 100, has_more: true });
  });

  it('revalidates with the ETag of its previous answer: a 304 costs no rate-limit budget and gives the same result', async () => {
    const first = await list({ state: 'all' });
    const budgetAfterFirst = world.forge.requests.at(-1)!;
    expect(budgetAfterFirst).toMatchObject({ status: 200, conditional: false });
    const second = await list({ state: 'all' });
    expect(world.forge.requests.at(-1)).toMatchObject({ status: 304, conditional: true });
    expect(second).toEqual(first);
    // Another credential (here none) never gets the first token's validators.
    const other = new VcsListPrsTool(clients);
    await runTool(other, { owner: 'acme', repo: 'widgets', state: 'all' }, { config: { FORGE_API_URL: world.forge.url } });
    expect(world.forge.requests.at(-1)).toMatchObject({ status: 200, conditional: false, authenticated: false });
  });

  it('reuses one client per forge and token, and an account FORGE_TOKEN secret wins over the operator setting', async () => {
    await list({});
    await list({ state: 'closed' });
    expect(clients.size).toBe(1);
    // The operator's token (the bot's) cannot see the private acme/secret-plans; the account's own token (ada's) can.
    expect(await toolFailure(list({ repo: 'secret-plans' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'repo' } });
    await expect(list({ repo: 'secret-plans' }, { secrets: { FORGE_TOKEN: ADA_TOKEN } })).resolves.toMatchObject({ count: 1 });
    expect(clients.size).toBe(2);
  });

  it('refuses bad input naming the parameter', async () => {
    for (const [input, parameter] of [
      [{ owner: 'acme/../../admin' }, 'owner'],
      [{ repo: '..' }, 'repo'],
      [{ state: 'merged' }, 'state'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 5000 }, 'limit'],
      [{ base: 'a..b' }, 'base'],
      [{ head: 'x'.repeat(400) }, 'head'],
    ] as const) {
      expect(await toolFailure(list(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    }
    expect(await toolFailure(runTool(tool, { repo: 'widgets' }, { config: world.config }))).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('owner') });
  });

  it('names the owner or the repository a 404 is about', async () => {
    expect(await toolFailure(list({ repo: 'gadgets' }))).toMatchObject({ code: 'INVALID_INPUT', retryable: false, details: { parameter: 'repo', received: 'gadgets' }, message: expect.stringContaining("'acme/gadgets' was not found") });
    expect(await toolFailure(list({ owner: 'nobody' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'owner', received: 'nobody' } });
  });

  it('maps a rejected token to a non-retryable TOOL_ERROR saying where to set one', async () => {
    const failure = await toolFailure(list({}, { config: { ...world.config, FORGE_TOKEN: 'ghp_revoked' } }));
    expect(failure).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'forge', status: 401 } } });
    expect(failure.message).toContain('rejected the token');
    expect(failure.suggestion).toContain('PUT /v1/secrets/FORGE_TOKEN');
    expect(failure.message).not.toContain('ghp_revoked');
  });

  it('maps an exhausted primary rate limit (403, x-ratelimit-remaining: 0) to a retryable error with retry_after from x-ratelimit-reset', async () => {
    const limited = await startForge({ rateLimit: { authenticated: 3, anonymous: 1 } });
    try {
      limited.forge.exhaustRateLimit('tos-bot', 120);
      const failure = await toolFailure(runTool(tool, { owner: 'acme', repo: 'widgets' }, { config: limited.config }));
      expect(failure).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { status: 403 }, rate_limit: { kind: 'primary', limit: 3 } } });
      expect(failure.retryAfter).toBeGreaterThanOrEqual(119);
      expect(failure.retryAfter).toBeLessThanOrEqual(120);
      // Anonymous callers have their own, smaller budget.
      await runTool(tool, { owner: 'acme', repo: 'widgets' }, { config: { FORGE_API_URL: limited.forge.url } });
      expect(await toolFailure(runTool(tool, { owner: 'acme', repo: 'widgets', state: 'all' }, { config: { FORGE_API_URL: limited.forge.url } }))).toMatchObject({ retryable: true, details: { upstream: { status: 403 } } });
    } finally {
      await limited.forge.stop();
    }
  });

  it('maps secondary rate limits (403 or 429, Retry-After or none) to retryable errors', async () => {
    world.forge.secondaryRateLimit(30);
    expect(await toolFailure(list({}))).toMatchObject({ retryable: true, retryAfter: 30, details: { rate_limit: { kind: 'secondary' } } });
    world.forge.secondaryRateLimit(null);
    expect(await toolFailure(list({}))).toMatchObject({ retryable: true, retryAfter: 60 });
    world.forge.secondaryRateLimit(7, { status: 429 });
    expect(await toolFailure(list({}))).toMatchObject({ retryable: true, retryAfter: 7, details: { upstream: { status: 429 } } });
  });

  it('maps 5xx and dropped connections to retryable errors, and a plain 403 to a non-retryable one', async () => {
    world.forge.fail({ operationId: 'pulls/list', status: 502 });
    expect(await toolFailure(list({}))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { service: 'forge', status: 502 } } });
    world.forge.fail({ operationId: 'pulls/list', status: 503, headers: { 'retry-after': '12' } });
    expect(await toolFailure(list({}))).toMatchObject({ retryable: true, retryAfter: 12 });
    world.forge.fail({ operationId: 'pulls/list', destroy: true });
    expect(await toolFailure(list({}))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, message: expect.stringContaining(`Could not reach ${new URL(world.forge.url).origin}`) });
    world.forge.fail({ operationId: 'pulls/list', status: 403, message: 'Resource not accessible by integration' });
    expect(await toolFailure(list({}))).toMatchObject({ code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('Resource not accessible by integration') });
  });

  it('stops at once when cancelled mid-request, and the forge sees the client go', async () => {
    const { error, settledMs, abandoned } = await cancelDuring(world.forge, 'pulls/list', (signal) => list({ state: 'all' }, { signal }));
    expect(error).toEqual(new Error('cancelled by the caller'));
    expect(settledMs).toBeLessThan(1000);
    expect(abandoned).toBe(true);
  });

  it('does not follow a pagination link to another origin (it would carry the token)', async () => {
    const seen: string[] = [];
    const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
    const elsewhere = createServer((req, res) => (seen.push(String(req.headers.authorization)), res.writeHead(200, { 'content-type': 'application/json' }).end('[]')));
    const elsewherePort = await listen(elsewhere);
    const hostile = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', link: `<http://127.0.0.1:${elsewherePort}/steal?page=2>; rel="next"` }).end('[]'));
    const hostilePort = await listen(hostile);
    try {
      const failure = await toolFailure(list({}, { config: { FORGE_API_URL: `http://127.0.0.1:${hostilePort}`, FORGE_TOKEN: 'ghp_secret' } }));
      expect(failure).toMatchObject({ code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('pagination link leaves') });
      expect(seen).toEqual([]);
    } finally {
      for (const server of [hostile, elsewhere]) await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a forge on a loopback address through the egress policy', async () => {
    const before = world.forge.requests.length;
    expect(await toolFailure(list({}, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FORGE_API_URL', expected: 'a public address' } });
    expect(world.forge.requests.length).toBe(before);
  });
});
