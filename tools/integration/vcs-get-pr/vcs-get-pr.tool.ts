import type { RestEndpointMethodTypes } from '@octokit/rest';
import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { checksState, FORGE_READ_CACHE_TTL, FORGE_SETTINGS, type ForgeClient, ForgeClients, loginOf, OWNER_INPUT, PULL_NUMBER_INPUT, REPO_INPUT, type Subject, summarizeReviews, utc, utcOrNull } from '../../integrations/forge';

/** GitHub lists at most 3000 files of a pull request. */
const MAX_FILES = 3000;
/** Reviews and check runs read (their newest pages hold what decides a merge). */
const MAX_REVIEWS = 300;
const MAX_CHECK_RUNS = 300;
/** GitHub computes mergeability in the background and answers null meanwhile: read again, a few times. */
const MERGEABILITY_READS = 3;
const MERGEABILITY_WAIT_MS = 1000;

type PullRequest = RestEndpointMethodTypes['pulls']['get']['response']['data'];

type GetPrInput = ToolInput<typeof definition>;
type GetPrOutput = ToolOutput<typeof definition>;

const strings = { type: 'array', items: { type: 'string' } } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const definition = defineTool({
  id: 'vcs-get-pr',
  name: 'Get Pull Request',
  category: 'integration',
  description: 'One pull request of a forge repository: metadata and mergeability, the files it changes, its reviews and where they stand, and the check runs and commit statuses of its head commit.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  cache_ttl: FORGE_READ_CACHE_TTL,
  open_world: true,
  timeout: 60,
  rate_limit: 100,
  config: FORGE_SETTINGS,
  input: {
    type: 'object',
    properties: {
      owner: OWNER_INPUT,
      repo: REPO_INPUT,
      pull_number: PULL_NUMBER_INPUT,
      max_files: { type: 'integer', minimum: 0, maximum: MAX_FILES, default: 300, description: `Most changed files listed (0 for none, at most ${MAX_FILES}, the forge's own cap).` },
    },
    required: ['owner', 'repo', 'pull_number'],
  },
  output: {
    type: 'object',
    properties: {
      pr: {
        type: 'object',
        description: 'The pull request: id, number, title, body, author, state, draft, merged, merged_by, mergeable (null while the forge still computes it), mergeable_state, html_url, times (ISO 8601 UTC), head and base, labels, requested reviewers, counts.',
        properties: {
          id: { type: 'integer' },
          number: { type: 'integer' },
          title: { type: 'string' },
          body: { type: ['string', 'null'] },
          author: { type: 'string' },
          state: { type: 'string', enum: ['open', 'closed'] },
          draft: { type: 'boolean' },
          merged: { type: 'boolean' },
          merged_by: { type: ['string', 'null'] },
          mergeable: { type: ['boolean', 'null'] },
          mergeable_state: { type: 'string' },
          html_url: { type: 'string' },
          created_at: dateTime,
          updated_at: dateTime,
          closed_at: nullableDateTime,
          merged_at: nullableDateTime,
          head: { type: 'object', properties: { ref: { type: 'string' }, sha: { type: 'string' }, repo: { type: ['string', 'null'] } } },
          base: { type: 'object', properties: { ref: { type: 'string' }, sha: { type: 'string' } } },
          labels: strings,
          requested_reviewers: strings,
          commits: { type: 'integer' },
          additions: { type: 'integer' },
          deletions: { type: 'integer' },
          changed_files: { type: 'integer' },
          comments: { type: 'integer' },
          review_comments: { type: 'integer' },
        },
      },
      files: {
        type: 'array',
        description: 'Changed files: filename, status (added, removed, modified, renamed, …), additions, deletions, changes, previous_filename for renames.',
        items: { type: 'object', required: ['filename', 'status', 'additions', 'deletions', 'changes'], properties: { filename: { type: 'string' }, status: { type: 'string' }, additions: { type: 'integer' }, deletions: { type: 'integer' }, changes: { type: 'integer' }, previous_filename: { type: 'string' } } },
      },
      files_truncated: { type: 'boolean', description: 'More files changed than listed (max_files).' },
      reviews: {
        type: 'array',
        description: 'Submitted reviews in the order given: author, state (APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED), submitted_at.',
        items: { type: 'object', properties: { id: { type: 'integer' }, author: { type: 'string' }, state: { type: 'string' }, submitted_at: nullableDateTime } },
      },
      review_summary: {
        type: 'object',
        description: "Each reviewer's standing decision (latest approval or change request, cleared by a dismissal), and who is still asked to review.",
        properties: { approved: strings, changes_requested: strings, requested: strings },
      },
      checks: {
        type: 'object',
        description: 'The head commit: overall state (success, failure, pending, none), check runs (name, status, conclusion, times) and commit statuses (context, state, description).',
        properties: {
          state: { type: 'string', enum: ['success', 'failure', 'pending', 'none'] },
          runs: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, status: { type: 'string' }, conclusion: { type: ['string', 'null'] }, started_at: nullableDateTime, completed_at: nullableDateTime } } },
          statuses: { type: 'array', items: { type: 'object', properties: { context: { type: 'string' }, state: { type: 'string' }, description: { type: ['string', 'null'] } } } },
        },
      },
    },
    required: ['pr', 'files', 'files_truncated', 'reviews', 'review_summary', 'checks'],
  },
  examples: [
    {
      name: 'A reviewed pull request with a failing check',
      input: { owner: 'acme', repo: 'widgets', pull_number: 1 },
      output: {
        pr: {
          id: 300001,
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
          html_url: 'https://forge.example.test:9243/acme/widgets/pull/1',
          created_at: '2025-03-01T10:00:00.000Z',
          updated_at: '2025-03-03T08:30:00.000Z',
          closed_at: null,
          merged_at: null,
          head: { ref: 'retry-webhooks', sha: 'c0ffee0000000000000000000000000000000001', repo: 'acme/widgets' },
          base: { ref: 'main', sha: 'e66701d6d95397115d3192647dda4d9fa392a92a' },
          labels: ['enhancement'],
          requested_reviewers: ['linus'],
          commits: 3,
          additions: 131,
          deletions: 9,
          changed_files: 3,
          comments: 2,
          review_comments: 0,
        },
        files: [
          { filename: 'src/webhooks/client.ts', status: 'modified', additions: 42, deletions: 7, changes: 49 },
          { filename: 'src/webhooks/backoff.ts', status: 'added', additions: 31, deletions: 0, changes: 31 },
          { filename: 'test/webhooks/client.spec.ts', status: 'modified', additions: 58, deletions: 2, changes: 60 },
        ],
        files_truncated: false,
        reviews: [
          { id: 400001, author: 'grace', state: 'COMMENTED', submitted_at: '2025-03-02T09:00:00.000Z' },
          { id: 400002, author: 'grace', state: 'APPROVED', submitted_at: '2025-03-02T15:00:00.000Z' },
          { id: 400003, author: 'linus', state: 'CHANGES_REQUESTED', submitted_at: '2025-03-03T08:00:00.000Z' },
        ],
        review_summary: { approved: ['grace'], changes_requested: ['linus'], requested: ['linus'] },
        checks: {
          state: 'failure',
          runs: [
            {
              name: 'test',
              status: 'completed',
              conclusion: 'failure',
              started_at: '2025-03-03T08:31:00.000Z',
              completed_at: '2025-03-03T08:36:10.000Z',
            },
            {
              name: 'build',
              status: 'completed',
              conclusion: 'success',
              started_at: '2025-03-03T08:31:00.000Z',
              completed_at: '2025-03-03T08:33:30.000Z',
            },
          ],
          statuses: [{ context: 'coverage/codecov', state: 'success', description: '91.2% (+0.4%)' }],
        },
      },
    },
  ],
});

@Tool(definition)
export class VcsGetPrTool implements ToolHandler<typeof definition> {
  constructor(private readonly forges: ForgeClients) {}

  async execute(input: GetPrInput, ctx: ToolContext<typeof definition>): Promise<GetPrOutput> {
    const forge = await this.forges.connect(ctx);
    const subject: Subject = { owner: input.owner, repo: input.repo, parameter: 'pull_number', value: input.pull_number };
    const where = { owner: input.owner, repo: input.repo };
    const pull = await readSettled(forge, { ...where, pull_number: input.pull_number }, subject, ctx);
    ctx.progress(25, 'pull request read');

    const [files, reviews, runs, combined] = await Promise.all([
      input.max_files > 0 ? forge.list(forge.rest.pulls.listFiles, { ...where, pull_number: input.pull_number }, { subject, limit: input.max_files }) : { items: [], more: pull.changed_files > 0 },
      forge.list(forge.rest.pulls.listReviews, { ...where, pull_number: input.pull_number }, { subject, limit: MAX_REVIEWS }),
      forge.list(forge.rest.checks.listForRef, { ...where, ref: pull.head.sha }, { subject, limit: MAX_CHECK_RUNS, items: (data) => data.check_runs }),
      forge.read(forge.rest.repos.getCombinedStatusForRef, { ...where, ref: pull.head.sha, per_page: 100 }, subject),
    ]);
    ctx.progress(100);

    const submitted = reviews.items.filter((r) => r.state !== 'PENDING').map((r) => ({ id: r.id, author: loginOf(r.user), state: r.state, submitted_at: utcOrNull(r.submitted_at) }));
    const checkRuns = runs.items.map((r) => ({ name: r.name, status: r.status, conclusion: r.conclusion, started_at: utcOrNull(r.started_at), completed_at: utcOrNull(r.completed_at) }));
    const statuses = combined.statuses.map((s) => ({ context: s.context, state: s.state, description: s.description }));
    return {
      pr: details(pull),
      files: files.items.map((f) => ({ filename: f.filename, status: f.status, additions: f.additions, deletions: f.deletions, changes: f.changes, ...(f.previous_filename && { previous_filename: f.previous_filename }) })),
      files_truncated: files.more,
      reviews: submitted,
      review_summary: { ...summarizeReviews(submitted), requested: (pull.requested_reviewers ?? []).map(loginOf) },
      checks: { state: checksState(checkRuns, statuses), runs: checkRuns, statuses },
    };
  }
}

/** The pull request, read again while the forge still computes its mergeability (open ones only). */
async function readSettled(forge: ForgeClient, params: { owner: string; repo: string; pull_number: number }, subject: Subject, ctx: ToolContext): Promise<PullRequest> {
  for (let read = 1; ; read++) {
    const pull = await forge.read(forge.rest.pulls.get, params, subject);
    if (pull.mergeable !== null || pull.state !== 'open' || read >= MERGEABILITY_READS) return pull;
    await ctx.sleep(MERGEABILITY_WAIT_MS);
  }
}

function details(pull: PullRequest) {
  return {
    id: pull.id,
    number: pull.number,
    title: pull.title,
    body: pull.body,
    author: loginOf(pull.user),
    state: pull.state as 'open' | 'closed',
    draft: pull.draft ?? false,
    merged: pull.merged,
    merged_by: pull.merged_by ? pull.merged_by.login : null,
    mergeable: pull.mergeable,
    mergeable_state: pull.mergeable_state,
    html_url: pull.html_url,
    created_at: utc(pull.created_at),
    updated_at: utc(pull.updated_at),
    closed_at: utcOrNull(pull.closed_at),
    merged_at: utcOrNull(pull.merged_at),
    head: { ref: pull.head.ref, sha: pull.head.sha, repo: pull.head.repo?.full_name ?? null },
    base: { ref: pull.base.ref, sha: pull.base.sha },
    labels: pull.labels.map((label) => label.name),
    requested_reviewers: (pull.requested_reviewers ?? []).map(loginOf),
    commits: pull.commits,
    additions: pull.additions,
    deletions: pull.deletions,
    changed_files: pull.changed_files,
    comments: pull.comments,
    review_comments: pull.review_comments,
  };
}
