/**
 * The fake forge the forge tools are tested against: it serves every operation they call, in
 * shapes GitHub's published description accepts, and the check that holds it there can fail.
 */
import { startForge, stopForge, type StartedForge } from '../../../test/support/forge';
import { OPERATIONS } from '../../../test/support/forge/openapi/extract';
import { GithubDescription } from '../../../test/support/forge/openapi/github-description';

describe('the fake forge', () => {
  let world: StartedForge;
  const call = async (method: string, path: string, body?: unknown, token: string | null = world.config.FORGE_TOKEN) => {
    const response = await fetch(`${world.forge.url}${path}`, {
      method,
      headers: { accept: 'application/vnd.github+json', ...(token && { authorization: `token ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  beforeAll(async () => {
    world = await startForge({ pathPrefix: '/api/v3' });
  });
  afterAll(() => stopForge(world));

  it('answers every operation the tools call, each answer checked against the description', async () => {
    const pr = world.data.pulls[0];
    const run = world.forge.model.runs[0];
    const bot = world.forge.model.comments.find((c) => c.user === 'tos-bot')!;
    const answers = [
      await call('GET', '/repos/acme/widgets'),
      await call('GET', '/users/ada'),
      await call('GET', '/repos/acme/widgets/pulls?state=all&per_page=2'),
      await call('GET', '/repos/acme/widgets/pulls/1'),
      await call('GET', '/repos/acme/widgets/pulls/1/files?per_page=1&page=2'),
      await call('GET', '/repos/acme/widgets/pulls/1/reviews'),
      await call('GET', `/repos/acme/widgets/commits/${pr.head.sha}/check-runs`),
      await call('GET', `/repos/acme/widgets/commits/${pr.head.sha}/status`),
      await call('GET', '/repos/acme/widgets/actions/workflows/ci.yml'),
      await call('GET', '/repos/acme/widgets/actions/workflows/ci.yml/runs?branch=main&exclude_pull_requests=true'),
      await call('GET', `/repos/acme/widgets/actions/runs/${run.id}`),
      await call('POST', '/repos/acme/widgets/actions/workflows/deploy.yml/dispatches', { ref: 'main', inputs: { environment: 'qa' }, return_run_details: true }),
      await call('POST', '/repos/acme/widgets/actions/workflows/deploy.yml/dispatches', { ref: 'main', inputs: { environment: 'qa' } }),
      await call('GET', '/repos/acme/widgets/issues/1/comments'),
      await call('POST', '/repos/acme/widgets/issues/1/comments', { body: 'hello' }),
      await call('PATCH', `/repos/acme/widgets/issues/comments/${bot.id}`, { body: 'edited' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 204, 200, 201, 200]);
    const served = new Set(world.forge.calls().filter((r) => r.status >= 200 && r.status < 300).map((r) => r.operationId));
    expect([...served].sort()).toEqual(GithubDescription.load().operationIds.sort());
    expect(served.size).toBe(OPERATIONS.length);
    expect(world.forge.openapi.violations).toEqual([]);
  });

  it("answers errors, Link pages, ETags and rate-limit headers in GitHub's forms", async () => {
    const page = await call('GET', '/repos/acme/widgets/pulls?state=all&per_page=1&page=2');
    expect(page.headers.get('link')).toBe(
      [`prev`, `first`, `next`, `last`]
        .map((rel, i) => `<${world.forge.url}/repos/acme/widgets/pulls?state=all&per_page=1&page=${[1, 1, 3, 4][i]}>; rel="${rel}"`)
        .join(', '),
    );
    expect(page.headers.get('x-ratelimit-resource')).toBe('core');
    const etag = page.headers.get('etag')!;
    const used = Number(page.headers.get('x-ratelimit-used'));
    const again = await fetch(`${world.forge.url}/repos/acme/widgets/pulls?state=all&per_page=1&page=2`, { headers: { authorization: `token ${world.config.FORGE_TOKEN}`, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(Number(again.headers.get('x-ratelimit-used'))).toBe(used);

    expect(JSON.parse((await call('GET', '/repos/acme/nothing')).text)).toEqual({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
    expect((await call('GET', '/repos/acme/widgets', undefined, 'ghp_wrong')).status).toBe(401);
    expect((await call('POST', '/repos/acme/widgets/issues/1/comments', { body: 'anonymous' }, null)).status).toBe(401);
    expect((await call('POST', '/repos/acme/widgets/actions/workflows/deploy.yml/dispatches', { ref: 'nope' })).status).toBe(422);
    world.forge.exhaustRateLimit('tos-bot', 60);
    const limited = await call('GET', '/repos/acme/widgets');
    expect(limited.status).toBe(403);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(world.forge.openapi.violations).toEqual([]);
  });

  describe("GitHub's description, as the fake is held to it", () => {
    const description = GithubDescription.load();
    const valid = () => JSON.parse(JSON.stringify(sample)) as Record<string, unknown>;
    let sample: Record<string, unknown>;

    beforeAll(async () => {
      const fresh = await startForge();
      const response = await fetch(`${fresh.forge.url}/repos/acme/widgets/issues/1/comments`, { signal: AbortSignal.timeout(5000) });
      sample = ((await response.json()) as Array<Record<string, unknown>>)[0];
      await stopForge(fresh);
    });

    it('accepts a real answer and refuses one missing a required member or of the wrong type', () => {
      expect(description.responseProblem('issues/list-comments', 200, [valid()])).toBeNull();
      const missing = valid();
      delete missing.node_id;
      expect(description.responseProblem('issues/list-comments', 200, [missing])).toMatch(/must have required property 'node_id'/);
      expect(description.responseProblem('issues/list-comments', 200, [{ ...valid(), id: '42' }])).toMatch(/id must be integer/);
      expect(description.responseProblem('issues/list-comments', 200, [{ ...valid(), created_at: 'yesterday' }])).toMatch(/created_at must match format "date-time"/);
    });

    it('refuses undescribed statuses, error bodies not in GitHub\'s form, bodies on 204/304, bad queries and request bodies', () => {
      expect(description.responseProblem('actions/get-workflow', 202, {})).toMatch(/not described/);
      expect(description.responseProblem('actions/get-workflow', 500, { message: 'boom', status: 500 })).toMatch(/status must be string/);
      expect(description.responseProblem('actions/create-workflow-dispatch', 204, {})).toMatch(/no body/);
      expect(description.requestProblem('pulls/list', new URLSearchParams('state=merged'), undefined)).toMatch(/must be equal to one of the allowed values/);
      expect(description.requestProblem('pulls/list', new URLSearchParams('labels=bug'), undefined)).toMatch(/'labels' is not described/);
      expect(description.requestProblem('actions/create-workflow-dispatch', new URLSearchParams(), { inputs: {} })).toMatch(/required property 'ref'/);
    });
  });
});
