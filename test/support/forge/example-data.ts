/**
 * The forge the tools' examples run against (example world) and most specs start from:
 * `acme/widgets` with four pull requests, reviews, checks, comments, a CI workflow with history
 * and a dispatchable deploy workflow. Fixed timestamps, so results compare exactly.
 */
import type { ForgeModel, ForgePull, ForgeRepo, ForgeWorkflow } from './model';

/** The token the example world's FORGE_TOKEN holds, and the user it belongs to. */
export const EXAMPLE_TOKEN = 'ghp_exampleWorldToken0000000000000000000';
export const EXAMPLE_BOT = 'tos-bot';
/** The marker of the bot's existing comment on acme/widgets#1 (the comment example updates it). */
export const EXAMPLE_MARKER = 'coverage-report';

export interface ExampleData {
  repo: ForgeRepo;
  /** #1 open, reviewed, checked; #2 open draft; #3 merged; #4 closed unmerged. */
  pulls: [ForgePull, ForgePull, ForgePull, ForgePull];
  ci: ForgeWorkflow;
  deploy: ForgeWorkflow;
}

export function seedExampleData(model: ForgeModel): ExampleData {
  model.addUser('acme', { type: 'Organization', name: 'Acme Corp' });
  for (const login of ['ada', 'grace', 'linus']) model.addUser(login);
  if (!model.user(EXAMPLE_BOT)) model.addUser(EXAMPLE_BOT);
  const repo = model.addRepo('acme', 'widgets', { description: 'Widgets for every occasion', collaborators: new Set(['ada', 'grace', 'linus', EXAMPLE_BOT]) });
  repo.branches.set('release/1.x', 'b1f00dfeed0000000000000000000000000000aa');
  repo.tags.set('v1.0.0', 'a1f00dfeed0000000000000000000000000000bb');

  const retry = model.addPull(repo, {
    title: 'Add retries to the webhook client',
    user: 'ada',
    body: 'Retries 5xx and network errors with backoff.',
    head: { ref: 'retry-webhooks', sha: 'c0ffee0000000000000000000000000000000001' },
    labels: ['enhancement'],
    requested_reviewers: ['linus'],
    created_at: '2025-03-01T10:00:00Z',
    updated_at: '2025-03-03T08:30:00Z',
    commits: 3,
    mergeable_state: 'blocked',
    files: [
      { filename: 'src/webhooks/client.ts', status: 'modified', additions: 42, deletions: 7 },
      { filename: 'src/webhooks/backoff.ts', status: 'added', additions: 31, deletions: 0 },
      { filename: 'test/webhooks/client.spec.ts', status: 'modified', additions: 58, deletions: 2 },
    ],
  });
  model.addReview(retry, { user: 'grace', state: 'COMMENTED', body: 'Why 250 ms?', submitted_at: '2025-03-02T09:00:00Z' });
  model.addReview(retry, { user: 'grace', state: 'APPROVED', submitted_at: '2025-03-02T15:00:00Z' });
  model.addReview(retry, { user: 'linus', state: 'CHANGES_REQUESTED', body: 'Cap the backoff.', submitted_at: '2025-03-03T08:00:00Z' });
  model.addCheckRun(repo, { head_sha: retry.head.sha, name: 'build', conclusion: 'success', started_at: '2025-03-03T08:31:00Z', completed_at: '2025-03-03T08:33:30Z' });
  model.addCheckRun(repo, { head_sha: retry.head.sha, name: 'test', conclusion: 'failure', started_at: '2025-03-03T08:31:00Z', completed_at: '2025-03-03T08:36:10Z' });
  model.addStatus(repo, { sha: retry.head.sha, context: 'coverage/codecov', state: 'success', description: '91.2% (+0.4%)', created_at: '2025-03-03T08:37:00Z', updated_at: '2025-03-03T08:37:00Z' });
  model.addComment(repo, retry.number, { user: 'ada', body: 'Ready for another look.', created_at: '2025-03-03T08:31:00Z', updated_at: '2025-03-03T08:31:00Z' });
  model.addComment(repo, retry.number, {
    user: EXAMPLE_BOT,
    body: `Coverage: 91.0%\n\n<!-- tos-comment-marker: ${EXAMPLE_MARKER} -->`,
    created_at: '2025-03-03T08:40:00Z',
    updated_at: '2025-03-03T08:40:00Z',
  });

  const flaky = model.addPull(repo, {
    title: 'Fix the flaky cache expiry test',
    user: 'grace',
    draft: true,
    head: { ref: 'fix-flaky-cache', sha: 'c0ffee0000000000000000000000000000000002' },
    labels: ['tests'],
    created_at: '2025-03-02T14:00:00Z',
    updated_at: '2025-03-02T16:45:00Z',
    mergeable_state: 'draft',
    files: [{ filename: 'test/cache/expiry.spec.ts', status: 'modified', additions: 5, deletions: 9 }],
  });
  const bump = model.addPull(repo, {
    title: 'Bump undici to 7.30',
    user: 'ada',
    state: 'closed',
    head: { ref: 'bump-undici', sha: 'c0ffee0000000000000000000000000000000003' },
    labels: ['dependencies'],
    created_at: '2025-02-20T09:00:00Z',
    updated_at: '2025-02-21T11:00:00Z',
    closed_at: '2025-02-21T11:00:00Z',
    merged_at: '2025-02-21T11:00:00Z',
    merged_by: 'grace',
    files: [
      { filename: 'package.json', status: 'modified', additions: 1, deletions: 1 },
      { filename: 'package-lock.json', status: 'modified', additions: 12, deletions: 12 },
    ],
  });
  const drop = model.addPull(repo, {
    title: 'Experiment: drop Node 18',
    user: 'linus',
    state: 'closed',
    head: { ref: 'drop-node-18', sha: 'c0ffee0000000000000000000000000000000004' },
    created_at: '2025-02-10T12:00:00Z',
    updated_at: '2025-02-12T12:00:00Z',
    closed_at: '2025-02-12T12:00:00Z',
    files: [{ filename: '.nvmrc', status: 'modified', additions: 1, deletions: 1 }],
  });

  const ci = model.addWorkflow(repo, { name: 'CI', path: '.github/workflows/ci.yml' });
  const ciRuns: Array<[branch: string, event: string, conclusion: 'success' | 'failure' | 'cancelled', created: string, minutes: number]> = [
    ['main', 'push', 'success', '2025-03-01T09:00:00Z', 6],
    ['retry-webhooks', 'pull_request', 'failure', '2025-03-01T10:01:00Z', 7],
    ['main', 'push', 'success', '2025-03-02T11:00:00Z', 5],
    ['fix-flaky-cache', 'pull_request', 'cancelled', '2025-03-02T14:01:00Z', 2],
    ['retry-webhooks', 'pull_request', 'failure', '2025-03-03T08:31:00Z', 6],
  ];
  for (const [branch, event, conclusion, created, minutes] of ciRuns) {
    const started = new Date(Date.parse(created) + 10_000).toISOString().replace('.000Z', 'Z');
    const updated = new Date(Date.parse(created) + 10_000 + minutes * 60_000).toISOString().replace('.000Z', 'Z');
    model.addRun(ci, { head_branch: branch, event, conclusion, status: 'completed', created_at: created, run_started_at: started, updated_at: updated, actor: branch === 'main' ? 'grace' : 'ada', display_title: event === 'push' ? 'Merge pull request' : `CI for ${branch}` });
  }
  // The newest run is still going.
  model.addRun(ci, { head_branch: 'main', event: 'push', status: 'in_progress', conclusion: null, created_at: '2025-03-03T09:00:00Z', run_started_at: '2025-03-03T09:00:12Z', updated_at: '2025-03-03T09:02:00Z', actor: 'grace', display_title: 'Merge pull request' });

  const deploy = model.addWorkflow(repo, {
    name: 'Deploy',
    path: '.github/workflows/deploy.yml',
    dispatch: { environment: { required: true }, version: { default: 'latest' } },
  });
  return { repo, pulls: [retry, flaky, bump, drop], ci, deploy };
}
