/**
 * What the fake forge does for each operation (by GitHub's operationId), over the model. The
 * HTTP mechanics (auth, rate limits, ETags, faults, description checks) live in server.ts.
 */
import type { ForgeModel, ForgePull, ForgeRepo, ForgeRun, ForgeUser } from './model';
import * as shapes from './shapes';
import type { ForgeUrls } from './shapes';

export interface OperationRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** The token's user; null for an anonymous call. */
  user: ForgeUser | null;
  urls: ForgeUrls;
  model: ForgeModel;
  /** The slice of `items` the query's page/per_page asks for; sets the Link header. */
  page<T>(items: T[]): T[];
  options: OperationOptions;
}

export interface OperationOptions {
  /** github.com answers a dispatch with the run's id when asked (`return_run_details`); Enterprise Server answers 204. */
  dispatchReturnsRunDetails: boolean;
  /** How long after a dispatch its run appears (GitHub takes a few seconds). */
  runCreationDelayMs: number;
  /** Schedules work the server cancels when it stops. */
  later(ms: number, work: () => void): void;
}

export interface OperationReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An error answer in GitHub's shape: `{ message, documentation_url, status }`. */
export class ForgeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly documentationPath = '/rest',
  ) {
    super(message);
  }
}

type Handler = (request: OperationRequest) => OperationReply;

const notFound = () => new ForgeHttpError(404, 'Not Found');

/** A repository the caller may see: private ones are 404 to anyone but their owner and collaborators, as on GitHub. */
function visibleRepo(request: OperationRequest): ForgeRepo {
  const repo = request.model.repo(request.params.owner, request.params.repo);
  if (!repo || (repo.private && !mayWrite(repo, request.user))) throw notFound();
  return repo;
}

function mayWrite(repo: ForgeRepo, user: ForgeUser | null): boolean {
  return user !== null && (user.login === repo.owner || repo.collaborators.has(user.login));
}

function requireUser(request: OperationRequest): ForgeUser {
  if (!request.user) throw new ForgeHttpError(401, 'Requires authentication');
  return request.user;
}

function pullOf(request: OperationRequest, repo: ForgeRepo, number: string): ForgePull {
  const pull = /^\d+$/.test(number) ? request.model.pull(repo, Number(number)) : undefined;
  if (!pull) throw notFound();
  return pull;
}

/** A SHA, branch or tag of the repository, as the commits/{ref} operations accept. */
function commitOf(request: OperationRequest, repo: ForgeRepo, ref: string): string | undefined {
  if (repo.branches.has(ref)) return repo.branches.get(ref);
  if (repo.tags.has(ref)) return repo.tags.get(ref);
  const known = [...repo.branches.values(), ...repo.tags.values(), ...request.model.pulls.filter((p) => p.repo === repo).flatMap((p) => [p.head.sha, p.base.sha])];
  return known.find((sha) => /^[0-9a-f]{7,40}$/.test(ref) && sha.startsWith(ref));
}

function timeOf(value: string): number {
  return Date.parse(value);
}

const byNewest = <T extends { created_at: string; id: number }>(a: T, b: T) => timeOf(b.created_at) - timeOf(a.created_at) || b.id - a.id;

export const HANDLERS: Record<string, Handler> = {
  'repos/get': (request) => ({ status: 200, body: shapes.fullRepository(visibleRepo(request), request.urls, request.model) }),

  'users/get-by-username': (request) => {
    const user = request.model.user(request.params.username);
    if (!user) throw notFound();
    return { status: 200, body: shapes.publicUser(user, request.urls, request.model) };
  },

  'pulls/list': (request) => {
    const repo = visibleRepo(request);
    const { query } = request;
    const state = query.get('state') ?? 'open';
    const sort = query.get('sort') ?? 'created';
    const direction = query.get('direction') ?? (sort === 'created' ? 'desc' : 'asc');
    const head = query.get('head');
    const base = query.get('base');
    const pulls = request.model.pulls
      .filter((p) => p.repo === repo && (state === 'all' || p.state === state))
      .filter((p) => !base || p.base.ref === base)
      .filter((p) => !head || `${repo.owner}:${p.head.ref}` === (head.includes(':') ? head : `${repo.owner}:${head}`))
      .sort((a, b) => {
        const order = sort === 'updated' ? timeOf(a.updated_at) - timeOf(b.updated_at) : sort === 'popularity' ? commentCount(request, a) - commentCount(request, b) : timeOf(a.created_at) - timeOf(b.created_at);
        return (direction === 'asc' ? order : -order) || (direction === 'asc' ? a.number - b.number : b.number - a.number);
      });
    return { status: 200, body: request.page(pulls).map((p) => shapes.pullRequestSimple(p, request.urls, request.model)) };
  },

  'pulls/get': (request) => {
    const pull = pullOf(request, visibleRepo(request), request.params.pull_number);
    // GitHub computes mergeability in the background: the first reads may answer null.
    const known = pull.mergeability_pending_reads <= 0;
    if (!known) pull.mergeability_pending_reads -= 1;
    return { status: 200, body: shapes.pullRequest(pull, request.urls, request.model, known) };
  },

  'pulls/list-files': (request) => {
    const pull = pullOf(request, visibleRepo(request), request.params.pull_number);
    // GitHub lists at most 3000 files of a pull request.
    return { status: 200, body: request.page(pull.files.slice(0, 3000)).map((f) => shapes.diffEntry(pull, f, request.urls)) };
  },

  'pulls/list-reviews': (request) => {
    const pull = pullOf(request, visibleRepo(request), request.params.pull_number);
    const chronological = [...pull.reviews].sort((a, b) => timeOf(a.submitted_at) - timeOf(b.submitted_at) || a.id - b.id);
    return { status: 200, body: request.page(chronological).map((r) => shapes.review(pull, r, request.urls, request.model)) };
  },

  'checks/list-for-ref': (request) => {
    const repo = visibleRepo(request);
    const sha = commitOf(request, repo, request.params.ref);
    if (!sha) throw new ForgeHttpError(422, `No commit found for SHA: ${request.params.ref}`);
    const runs = request.model.checkRuns.filter((c) => c.repo === repo && c.head_sha === sha).sort((a, b) => b.id - a.id);
    return { status: 200, body: { total_count: runs.length, check_runs: request.page(runs).map((c) => shapes.checkRun(c, request.urls)) } };
  },

  'repos/get-combined-status-for-ref': (request) => {
    const repo = visibleRepo(request);
    const sha = commitOf(request, repo, request.params.ref);
    if (!sha) throw new ForgeHttpError(404, `No commit found for SHA: ${request.params.ref}`);
    const latestPerContext = new Map<string, (typeof request.model.statuses)[number]>();
    for (const status of request.model.statuses.filter((s) => s.repo === repo && s.sha === sha).sort(byNewest)) {
      if (!latestPerContext.has(status.context)) latestPerContext.set(status.context, status);
    }
    return { status: 200, body: shapes.combinedStatus(repo, request.params.ref, sha, request.page([...latestPerContext.values()]), request.urls, request.model) };
  },

  'actions/get-workflow': (request) => {
    const workflow = request.model.workflow(visibleRepo(request), request.params.workflow_id);
    if (!workflow) throw notFound();
    return { status: 200, body: shapes.workflow(workflow, request.urls) };
  },

  'actions/list-workflow-runs': (request) => {
    const repo = visibleRepo(request);
    const workflow = request.model.workflow(repo, request.params.workflow_id);
    if (!workflow) throw notFound();
    const { query } = request;
    const runs = request.model.runs
      .filter((r) => r.workflow === workflow)
      .filter((r) => !query.get('branch') || r.head_branch === query.get('branch'))
      .filter((r) => !query.get('event') || r.event === query.get('event'))
      .filter((r) => !query.get('actor') || r.actor === query.get('actor'))
      .filter((r) => !query.get('head_sha') || r.head_sha === query.get('head_sha'))
      .filter((r) => !query.get('status') || r.status === query.get('status') || r.conclusion === query.get('status'))
      .sort(byNewest);
    return { status: 200, body: { total_count: runs.length, workflow_runs: request.page(runs).map((r) => shapes.workflowRun(r, request.urls, request.model)) } };
  },

  'actions/get-workflow-run': (request) => {
    const repo = visibleRepo(request);
    const run = request.model.runs.find((r) => r.repo === repo && String(r.id) === request.params.run_id);
    if (!run) throw notFound();
    return { status: 200, body: shapes.workflowRun(run, request.urls, request.model) };
  },

  'actions/create-workflow-dispatch': (request) => {
    const user = requireUser(request);
    const repo = visibleRepo(request);
    if (!mayWrite(repo, user)) throw new ForgeHttpError(403, 'Resource not accessible by personal access token');
    const workflow = request.model.workflow(repo, request.params.workflow_id);
    if (!workflow) throw notFound();
    if (!workflow.dispatch) throw new ForgeHttpError(422, "Workflow does not have 'workflow_dispatch' trigger");
    const { ref, inputs = {}, return_run_details: wantsRun } = request.body as { ref: string; inputs?: Record<string, unknown>; return_run_details?: boolean };
    const short = ref.replace(/^refs\/(heads|tags)\//, '');
    const sha = repo.branches.get(short) ?? repo.tags.get(short);
    if (!sha) throw new ForgeHttpError(422, `No ref found for: ${ref}`);
    const unexpected = Object.keys(inputs).filter((name) => !(name in workflow.dispatch!));
    if (unexpected.length) throw new ForgeHttpError(422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`);
    const missing = Object.entries(workflow.dispatch).find(([name, input]) => input.required && input.default === undefined && inputs[name] === undefined);
    if (missing) throw new ForgeHttpError(422, `Required input '${missing[0]}' not provided`);
    const start = (): ForgeRun => {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      return request.model.addRun(workflow, { event: 'workflow_dispatch', status: 'queued', conclusion: null, head_branch: short, head_sha: sha, actor: user.login, created_at: now, updated_at: now, run_started_at: now, inputs });
    };
    if (wantsRun && request.options.dispatchReturnsRunDetails) {
      const run = start();
      const body = shapes.workflowRun(run, request.urls, request.model);
      return { status: 200, body: { workflow_run_id: run.id, run_url: body.url, html_url: body.html_url } };
    }
    if (request.options.runCreationDelayMs > 0) request.options.later(request.options.runCreationDelayMs, start);
    else start();
    return { status: 204 };
  },

  'issues/list-comments': (request) => {
    const repo = visibleRepo(request);
    const number = Number(request.params.issue_number);
    if (!request.model.pull(repo, number)) throw notFound();
    const since = request.query.get('since');
    const comments = request.model.comments.filter((c) => c.repo === repo && c.issue_number === number && (!since || timeOf(c.updated_at) >= timeOf(since))).sort((a, b) => a.id - b.id);
    return { status: 200, body: request.page(comments).map((c) => shapes.issueComment(c, request.urls, request.model)) };
  },

  'issues/create-comment': (request) => {
    const user = requireUser(request);
    const repo = visibleRepo(request);
    const number = Number(request.params.issue_number);
    if (!request.model.pull(repo, number)) throw notFound();
    const { body } = request.body as { body: string };
    if (!body) throw new ForgeHttpError(422, 'Validation Failed');
    const comment = request.model.addComment(repo, number, { user: user.login, body });
    const rendered = shapes.issueComment(comment, request.urls, request.model);
    return { status: 201, body: rendered, headers: { location: String(rendered.url) } };
  },

  'issues/update-comment': (request) => {
    const user = requireUser(request);
    const repo = visibleRepo(request);
    const comment = request.model.comments.find((c) => c.repo === repo && String(c.id) === request.params.comment_id);
    if (!comment) throw notFound();
    if (comment.user !== user.login && repo.owner !== user.login) throw new ForgeHttpError(403, 'Resource not accessible by personal access token');
    const { body } = request.body as { body: string };
    if (!body) throw new ForgeHttpError(422, 'Validation Failed');
    comment.body = body;
    comment.updated_at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return { status: 200, body: shapes.issueComment(comment, request.urls, request.model) };
  },
};

function commentCount(request: OperationRequest, pull: ForgePull): number {
  return request.model.comments.filter((c) => c.repo === pull.repo && c.issue_number === pull.number).length;
}
