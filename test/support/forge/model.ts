/**
 * The fake forge's data: users, repositories, pull requests with files, reviews and issue
 * comments, check runs and commit statuses, workflows and their runs, all in memory. Specs and
 * the example world seed it through the `add*` methods; the server renders it in GitHub's shapes.
 */
export type UserType = 'User' | 'Organization' | 'Bot';

export interface ForgeUser {
  id: number;
  login: string;
  type: UserType;
  name: string | null;
  created_at: string;
}

export interface ForgeRepo {
  id: number;
  owner: string;
  name: string;
  description: string | null;
  private: boolean;
  default_branch: string;
  /** Branch name → head SHA. */
  branches: Map<string, string>;
  /** Tag name → SHA. */
  tags: Map<string, string>;
  /** Logins that may read a private repository and write to any (the owner always may). */
  collaborators: Set<string>;
  created_at: string;
  updated_at: string;
}

export type FileStatus = 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed' | 'unchanged';

export interface ForgeFile {
  filename: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  previous_filename?: string;
}

export type ReviewState = 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';

export interface ForgeReview {
  id: number;
  user: string;
  state: ReviewState;
  body: string;
  commit_id: string;
  submitted_at: string;
}

export interface ForgePull {
  id: number;
  repo: ForgeRepo;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: 'open' | 'closed';
  draft: boolean;
  locked: boolean;
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
  labels: string[];
  requested_reviewers: string[];
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
  merged_by: string | null;
  /** What GitHub answers once its background mergeability job is done. */
  mergeable: boolean | null;
  mergeable_state: string;
  /** Reads answering `mergeable: null` (job still running) before the value above. */
  mergeability_pending_reads: number;
  commits: number;
  files: ForgeFile[];
  reviews: ForgeReview[];
}

export interface ForgeComment {
  id: number;
  repo: ForgeRepo;
  issue_number: number;
  user: string;
  body: string;
  created_at: string;
  updated_at: string;
}

export type CheckConclusion = 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required';

export interface ForgeCheckRun {
  id: number;
  repo: ForgeRepo;
  head_sha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: CheckConclusion | null;
  started_at: string | null;
  completed_at: string | null;
}

export interface ForgeStatus {
  id: number;
  repo: ForgeRepo;
  sha: string;
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  description: string | null;
  target_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface DispatchInput {
  required?: boolean;
  default?: string;
}

export interface ForgeWorkflow {
  id: number;
  repo: ForgeRepo;
  name: string;
  path: string;
  state: 'active' | 'deleted' | 'disabled_fork' | 'disabled_inactivity' | 'disabled_manually';
  /** The `workflow_dispatch` trigger's inputs; null when the workflow has no such trigger. */
  dispatch: Record<string, DispatchInput> | null;
  created_at: string;
  updated_at: string;
}

export interface ForgeRun {
  id: number;
  repo: ForgeRepo;
  workflow: ForgeWorkflow;
  run_number: number;
  run_attempt: number;
  event: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  conclusion: CheckConclusion | 'stale' | null;
  head_branch: string | null;
  head_sha: string;
  actor: string;
  display_title: string;
  created_at: string;
  updated_at: string;
  run_started_at: string;
  /** The dispatch inputs it ran with. */
  inputs?: Record<string, unknown>;
}

/** Distinct id ranges per kind, so a mixed-up id never finds an object of another kind. */
const ID_BASES = { user: 1000, repo: 20_000, pull: 300_000, review: 400_000, comment: 500_000, check: 600_000, status: 700_000, workflow: 800_000, run: 9_000_000 } as const;

export class ForgeModel {
  readonly users = new Map<string, ForgeUser>();
  readonly repos = new Map<string, ForgeRepo>();
  readonly pulls: ForgePull[] = [];
  readonly comments: ForgeComment[] = [];
  readonly checkRuns: ForgeCheckRun[] = [];
  readonly statuses: ForgeStatus[] = [];
  readonly workflows: ForgeWorkflow[] = [];
  readonly runs: ForgeRun[] = [];
  private readonly counters = new Map<keyof typeof ID_BASES, number>();

  nextId(kind: keyof typeof ID_BASES): number {
    const next = (this.counters.get(kind) ?? ID_BASES[kind]) + 1;
    this.counters.set(kind, next);
    return next;
  }

  addUser(login: string, options: Partial<Omit<ForgeUser, 'login' | 'id'>> = {}): ForgeUser {
    const user: ForgeUser = { id: this.nextId('user'), login, type: 'User', name: null, created_at: '2020-01-01T00:00:00Z', ...options };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  addRepo(owner: string, name: string, options: Partial<Omit<ForgeRepo, 'id' | 'owner' | 'name'>> = {}): ForgeRepo {
    if (!this.user(owner)) this.addUser(owner);
    const repo: ForgeRepo = {
      id: this.nextId('repo'),
      owner,
      name,
      description: null,
      private: false,
      default_branch: 'main',
      branches: new Map([['main', sha(`${owner}/${name}@main`)]]),
      tags: new Map(),
      collaborators: new Set(),
      created_at: '2021-03-01T09:00:00Z',
      updated_at: '2025-01-10T12:00:00Z',
      ...options,
    };
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    return repo;
  }

  addPull(repo: ForgeRepo, fields: Pick<ForgePull, 'title' | 'user'> & Partial<Omit<ForgePull, 'id' | 'repo' | 'number'>>): ForgePull {
    const number = this.nextIssueNumber(repo);
    const headRef = fields.head?.ref ?? `feature-${number}`;
    const pull: ForgePull = {
      body: null,
      state: 'open',
      draft: false,
      locked: false,
      head: { ref: headRef, sha: sha(`${repo.owner}/${repo.name}#${number}`) },
      base: { ref: repo.default_branch, sha: repo.branches.get(repo.default_branch) ?? sha('base') },
      labels: [],
      requested_reviewers: [],
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
      closed_at: null,
      merged_at: null,
      merged_by: null,
      mergeable: true,
      mergeable_state: 'clean',
      mergeability_pending_reads: 0,
      commits: 1,
      files: [],
      reviews: [],
      ...fields,
      id: this.nextId('pull'),
      repo,
      number,
    };
    if (!repo.branches.has(pull.head.ref)) repo.branches.set(pull.head.ref, pull.head.sha);
    this.pulls.push(pull);
    return pull;
  }

  addReview(pull: ForgePull, fields: Pick<ForgeReview, 'user' | 'state' | 'submitted_at'> & Partial<ForgeReview>): ForgeReview {
    const review: ForgeReview = { body: '', commit_id: pull.head.sha, ...fields, id: this.nextId('review') };
    pull.reviews.push(review);
    return review;
  }

  addComment(repo: ForgeRepo, issueNumber: number, fields: Pick<ForgeComment, 'user' | 'body'> & Partial<ForgeComment>): ForgeComment {
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const comment: ForgeComment = { created_at: at, updated_at: at, ...fields, id: this.nextId('comment'), repo, issue_number: issueNumber };
    this.comments.push(comment);
    return comment;
  }

  addCheckRun(repo: ForgeRepo, fields: Pick<ForgeCheckRun, 'head_sha' | 'name'> & Partial<ForgeCheckRun>): ForgeCheckRun {
    const run: ForgeCheckRun = { status: 'completed', conclusion: 'success', started_at: '2025-01-01T00:01:00Z', completed_at: '2025-01-01T00:03:00Z', ...fields, id: this.nextId('check'), repo };
    this.checkRuns.push(run);
    return run;
  }

  addStatus(repo: ForgeRepo, fields: Pick<ForgeStatus, 'sha' | 'context' | 'state'> & Partial<ForgeStatus>): ForgeStatus {
    const status: ForgeStatus = { description: null, target_url: null, created_at: '2025-01-01T00:02:00Z', updated_at: '2025-01-01T00:02:00Z', ...fields, id: this.nextId('status'), repo };
    this.statuses.push(status);
    return status;
  }

  addWorkflow(repo: ForgeRepo, fields: Pick<ForgeWorkflow, 'name' | 'path'> & Partial<ForgeWorkflow>): ForgeWorkflow {
    const workflow: ForgeWorkflow = { state: 'active', dispatch: null, created_at: '2024-06-01T00:00:00Z', updated_at: '2024-06-01T00:00:00Z', ...fields, id: this.nextId('workflow'), repo };
    this.workflows.push(workflow);
    return workflow;
  }

  addRun(workflow: ForgeWorkflow, fields: Partial<Omit<ForgeRun, 'id' | 'repo' | 'workflow' | 'run_number'>> = {}): ForgeRun {
    const created = fields.created_at ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const branch = fields.head_branch ?? workflow.repo.default_branch;
    const run: ForgeRun = {
      run_attempt: 1,
      event: 'push',
      status: 'completed',
      conclusion: 'success',
      head_branch: branch,
      head_sha: workflow.repo.branches.get(branch ?? '') ?? sha(`${workflow.path}@${created}`),
      actor: workflow.repo.owner,
      display_title: workflow.name,
      created_at: created,
      updated_at: created,
      run_started_at: created,
      ...fields,
      id: this.nextId('run'),
      repo: workflow.repo,
      workflow,
      run_number: this.runs.filter((r) => r.workflow === workflow).length + 1,
    };
    this.runs.push(run);
    return run;
  }

  user(login: string): ForgeUser | undefined {
    return this.users.get(login.toLowerCase());
  }

  repo(owner: string, name: string): ForgeRepo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  pull(repo: ForgeRepo, number: number): ForgePull | undefined {
    return this.pulls.find((p) => p.repo === repo && p.number === number);
  }

  /** By numeric id or by file name (`ci.yml`), as GitHub accepts both. */
  workflow(repo: ForgeRepo, idOrFile: string): ForgeWorkflow | undefined {
    return this.workflows.find((w) => w.repo === repo && (String(w.id) === idOrFile || w.path.split('/').pop() === idOrFile));
  }

  /** Issues and pull requests share one number sequence per repository. */
  private nextIssueNumber(repo: ForgeRepo): number {
    return this.pulls.filter((p) => p.repo === repo).length + 1;
  }
}

/** A stable 40-hex SHA for a seed string. */
export function sha(seed: string): string {
  let hex = '';
  for (let round = 0; hex.length < 40; round++) {
    let h = 2166136261 ^ round;
    for (const char of seed) h = Math.imul(h ^ char.charCodeAt(0), 16777619) >>> 0;
    hex += h.toString(16).padStart(8, '0');
  }
  return hex.slice(0, 40);
}
