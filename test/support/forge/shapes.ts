/**
 * The fake forge's objects in GitHub's REST shapes: every member the published description
 * requires, with URLs built the way api.github.com builds them (templates included).
 */
import type { ForgeCheckRun, ForgeComment, ForgeFile, ForgeModel, ForgePull, ForgeRepo, ForgeReview, ForgeRun, ForgeStatus, ForgeUser, ForgeWorkflow } from './model';

/** Where the forge answers: `api` is the REST base (…/api/v3 for an Enterprise Server), `web` the site. */
export interface ForgeUrls {
  api: string;
  web: string;
}

type Json = Record<string, unknown>;

const nodeId = (kind: string, id: number) => Buffer.from(`0:${kind}${id}`).toString('base64');

export function simpleUser(user: ForgeUser, { api, web }: ForgeUrls): Json {
  const u = `${api}/users/${user.login}`;
  return {
    login: user.login,
    id: user.id,
    node_id: nodeId('User', user.id),
    avatar_url: `${web}/avatars/u/${user.id}?v=4`,
    gravatar_id: '',
    url: u,
    html_url: `${web}/${user.login}`,
    followers_url: `${u}/followers`,
    following_url: `${u}/following{/other_user}`,
    gists_url: `${u}/gists{/gist_id}`,
    starred_url: `${u}/starred{/owner}{/repo}`,
    subscriptions_url: `${u}/subscriptions`,
    organizations_url: `${u}/orgs`,
    repos_url: `${u}/repos`,
    events_url: `${u}/events{/privacy}`,
    received_events_url: `${u}/received_events`,
    type: user.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

export function publicUser(user: ForgeUser, urls: ForgeUrls, model: ForgeModel): Json {
  return {
    ...simpleUser(user, urls),
    name: user.name,
    company: null,
    blog: '',
    location: null,
    email: null,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: [...model.repos.values()].filter((r) => r.owner === user.login && !r.private).length,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: user.created_at,
    updated_at: user.created_at,
  };
}

function userOf(login: string, urls: ForgeUrls, model: ForgeModel): Json {
  const user = model.user(login);
  if (!user) throw new Error(`fake forge: unknown user ${login}`);
  return simpleUser(user, urls);
}

/** The members `minimal-repository` requires: a repository's identity and its URL templates. */
function repositoryLinks(repo: ForgeRepo, urls: ForgeUrls, model: ForgeModel): Json {
  const r = `${urls.api}/repos/${repo.owner}/${repo.name}`;
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    owner: userOf(repo.owner, urls, model),
    private: repo.private,
    html_url: `${urls.web}/${repo.owner}/${repo.name}`,
    description: repo.description,
    fork: false,
    url: r,
    archive_url: `${r}/{archive_format}{/ref}`,
    assignees_url: `${r}/assignees{/user}`,
    blobs_url: `${r}/git/blobs{/sha}`,
    branches_url: `${r}/branches{/branch}`,
    collaborators_url: `${r}/collaborators{/collaborator}`,
    comments_url: `${r}/comments{/number}`,
    commits_url: `${r}/commits{/sha}`,
    compare_url: `${r}/compare/{base}...{head}`,
    contents_url: `${r}/contents/{+path}`,
    contributors_url: `${r}/contributors`,
    deployments_url: `${r}/deployments`,
    downloads_url: `${r}/downloads`,
    events_url: `${r}/events`,
    forks_url: `${r}/forks`,
    git_commits_url: `${r}/git/commits{/sha}`,
    git_refs_url: `${r}/git/refs{/sha}`,
    git_tags_url: `${r}/git/tags{/sha}`,
    hooks_url: `${r}/hooks`,
    issue_comment_url: `${r}/issues/comments{/number}`,
    issue_events_url: `${r}/issues/events{/number}`,
    issues_url: `${r}/issues{/number}`,
    keys_url: `${r}/keys{/key_id}`,
    labels_url: `${r}/labels{/name}`,
    languages_url: `${r}/languages`,
    merges_url: `${r}/merges`,
    milestones_url: `${r}/milestones{/number}`,
    notifications_url: `${r}/notifications{?since,all,participating}`,
    pulls_url: `${r}/pulls{/number}`,
    releases_url: `${r}/releases{/id}`,
    stargazers_url: `${r}/stargazers`,
    statuses_url: `${r}/statuses/{sha}`,
    subscribers_url: `${r}/subscribers`,
    subscription_url: `${r}/subscription`,
    tags_url: `${r}/tags`,
    teams_url: `${r}/teams`,
    trees_url: `${r}/git/trees{/sha}`,
  };
}

export function minimalRepository(repo: ForgeRepo, urls: ForgeUrls, model: ForgeModel): Json {
  return repositoryLinks(repo, urls, model);
}

/** `repository` (inside pull requests) and `full-repository` (GET /repos/{owner}/{repo}) share these. */
export function repository(repo: ForgeRepo, urls: ForgeUrls, model: ForgeModel): Json {
  const host = new URL(urls.web).host;
  const openIssues = model.pulls.filter((p) => p.repo === repo && p.state === 'open').length;
  return {
    ...repositoryLinks(repo, urls, model),
    git_url: `git://${host}/${repo.owner}/${repo.name}.git`,
    ssh_url: `git@${host}:${repo.owner}/${repo.name}.git`,
    clone_url: `${urls.web}/${repo.owner}/${repo.name}.git`,
    svn_url: `${urls.web}/${repo.owner}/${repo.name}`,
    mirror_url: null,
    homepage: null,
    language: 'TypeScript',
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 1024,
    default_branch: repo.default_branch,
    open_issues_count: openIssues,
    open_issues: openIssues,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: repo.private ? 'private' : 'public',
    license: null,
    allow_forking: true,
    pushed_at: repo.updated_at,
    created_at: repo.created_at,
    updated_at: repo.updated_at,
  };
}

export function fullRepository(repo: ForgeRepo, urls: ForgeUrls, model: ForgeModel): Json {
  return { ...repository(repo, urls, model), network_count: 0, subscribers_count: 0 };
}

function pullLinks(pull: ForgePull, { api, web }: ForgeUrls): Json {
  const r = `${api}/repos/${pull.repo.owner}/${pull.repo.name}`;
  const self = `${r}/pulls/${pull.number}`;
  return {
    url: self,
    html_url: `${web}/${pull.repo.owner}/${pull.repo.name}/pull/${pull.number}`,
    diff_url: `${web}/${pull.repo.owner}/${pull.repo.name}/pull/${pull.number}.diff`,
    patch_url: `${web}/${pull.repo.owner}/${pull.repo.name}/pull/${pull.number}.patch`,
    issue_url: `${r}/issues/${pull.number}`,
    commits_url: `${self}/commits`,
    review_comments_url: `${self}/comments`,
    review_comment_url: `${r}/pulls/comments{/number}`,
    comments_url: `${r}/issues/${pull.number}/comments`,
    statuses_url: `${r}/statuses/${pull.head.sha}`,
  };
}

/** `pull-request-simple`, as the list answers it. */
export function pullRequestSimple(pull: ForgePull, urls: ForgeUrls, model: ForgeModel): Json {
  const links = pullLinks(pull, urls);
  const href = (url: unknown) => ({ href: url });
  const branch = (side: { ref: string; sha: string }) => ({
    label: `${pull.repo.owner}:${side.ref}`,
    ref: side.ref,
    sha: side.sha,
    user: userOf(pull.repo.owner, urls, model),
    repo: repository(pull.repo, urls, model),
  });
  return {
    id: pull.id,
    node_id: nodeId('PullRequest', pull.id),
    number: pull.number,
    ...links,
    state: pull.state,
    locked: pull.locked,
    title: pull.title,
    user: userOf(pull.user, urls, model),
    body: pull.body,
    labels: pull.labels.map((name, index) => label(pull.repo, name, index, urls)),
    milestone: null,
    active_lock_reason: null,
    created_at: pull.created_at,
    updated_at: pull.updated_at,
    closed_at: pull.closed_at,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merged_at ? pull.base.sha : null,
    assignee: null,
    assignees: [],
    requested_reviewers: pull.requested_reviewers.map((login) => userOf(login, urls, model)),
    requested_teams: [],
    head: branch(pull.head),
    base: branch(pull.base),
    _links: {
      self: href(links.url),
      html: href(links.html_url),
      issue: href(links.issue_url),
      comments: href(links.comments_url),
      review_comments: href(links.review_comments_url),
      review_comment: href(links.review_comment_url),
      commits: href(links.commits_url),
      statuses: href(links.statuses_url),
    },
    author_association: pull.user === pull.repo.owner ? 'OWNER' : 'CONTRIBUTOR',
    auto_merge: null,
    draft: pull.draft,
  };
}

/** `pull-request`, as GET /pulls/{number} answers it. `mergeable` is null while GitHub still computes it. */
export function pullRequest(pull: ForgePull, urls: ForgeUrls, model: ForgeModel, mergeabilityKnown: boolean): Json {
  const merged = pull.merged_at !== null;
  return {
    ...pullRequestSimple(pull, urls, model),
    merged,
    mergeable: mergeabilityKnown ? pull.mergeable : null,
    rebaseable: mergeabilityKnown ? pull.mergeable : null,
    mergeable_state: mergeabilityKnown ? pull.mergeable_state : 'unknown',
    merged_by: pull.merged_by ? userOf(pull.merged_by, urls, model) : null,
    comments: model.comments.filter((c) => c.repo === pull.repo && c.issue_number === pull.number).length,
    review_comments: 0,
    maintainer_can_modify: false,
    commits: pull.commits,
    additions: pull.files.reduce((sum, f) => sum + f.additions, 0),
    deletions: pull.files.reduce((sum, f) => sum + f.deletions, 0),
    changed_files: pull.files.length,
  };
}

function label(repo: ForgeRepo, name: string, index: number, { api }: ForgeUrls): Json {
  const id = repo.id * 100 + index;
  return { id, node_id: nodeId('Label', id), url: `${api}/repos/${repo.owner}/${repo.name}/labels/${encodeURIComponent(name)}`, name, description: '', color: 'ededed', default: false };
}

export function diffEntry(pull: ForgePull, file: ForgeFile, { web, api }: ForgeUrls): Json {
  const path = file.filename.split('/').map(encodeURIComponent).join('/');
  const blob = file.status === 'removed' ? pull.base.sha : pull.head.sha;
  return {
    sha: file.status === 'removed' ? null : fileSha(pull, file),
    filename: file.filename,
    status: file.status,
    additions: file.additions,
    deletions: file.deletions,
    changes: file.additions + file.deletions,
    blob_url: `${web}/${pull.repo.owner}/${pull.repo.name}/blob/${blob}/${path}`,
    raw_url: `${web}/${pull.repo.owner}/${pull.repo.name}/raw/${blob}/${path}`,
    contents_url: `${api}/repos/${pull.repo.owner}/${pull.repo.name}/contents/${path}?ref=${blob}`,
    patch: `@@ -1,${file.deletions} +1,${file.additions} @@`,
    ...(file.previous_filename && { previous_filename: file.previous_filename }),
  };
}

function fileSha(pull: ForgePull, file: ForgeFile): string {
  return Buffer.from(`${pull.head.sha}:${file.filename}`).toString('hex').padEnd(40, '0').slice(0, 40);
}

export function review(pull: ForgePull, item: ForgeReview, urls: ForgeUrls, model: ForgeModel): Json {
  const html = `${urls.web}/${pull.repo.owner}/${pull.repo.name}/pull/${pull.number}#pullrequestreview-${item.id}`;
  const pullUrl = `${urls.api}/repos/${pull.repo.owner}/${pull.repo.name}/pulls/${pull.number}`;
  return {
    id: item.id,
    node_id: nodeId('PullRequestReview', item.id),
    user: userOf(item.user, urls, model),
    body: item.body,
    state: item.state,
    html_url: html,
    pull_request_url: pullUrl,
    _links: { html: { href: html }, pull_request: { href: pullUrl } },
    ...(item.state !== 'PENDING' && { submitted_at: item.submitted_at }),
    commit_id: item.commit_id,
    author_association: item.user === pull.repo.owner ? 'OWNER' : 'COLLABORATOR',
  };
}

export function checkRun(run: ForgeCheckRun, urls: ForgeUrls): Json {
  const r = `${urls.api}/repos/${run.repo.owner}/${run.repo.name}`;
  return {
    id: run.id,
    node_id: nodeId('CheckRun', run.id),
    head_sha: run.head_sha,
    external_id: '',
    url: `${r}/check-runs/${run.id}`,
    html_url: `${urls.web}/${run.repo.owner}/${run.repo.name}/runs/${run.id}`,
    details_url: `${urls.web}/${run.repo.owner}/${run.repo.name}/runs/${run.id}`,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.started_at,
    completed_at: run.completed_at,
    output: { title: null, summary: null, text: null, annotations_count: 0, annotations_url: `${r}/check-runs/${run.id}/annotations` },
    name: run.name,
    check_suite: { id: run.id + 1_000_000 },
    app: null,
    pull_requests: [],
  };
}

export function combinedStatus(repo: ForgeRepo, ref: string, sha: string, statuses: ForgeStatus[], urls: ForgeUrls, model: ForgeModel): Json {
  const r = `${urls.api}/repos/${repo.owner}/${repo.name}`;
  return {
    state: combinedState(statuses),
    statuses: statuses.map((s) => ({
      id: s.id,
      node_id: nodeId('StatusContext', s.id),
      url: `${r}/statuses/${s.sha}`,
      avatar_url: null,
      state: s.state,
      description: s.description,
      target_url: s.target_url,
      context: s.context,
      created_at: s.created_at,
      updated_at: s.updated_at,
    })),
    sha,
    total_count: statuses.length,
    repository: minimalRepository(repo, urls, model),
    commit_url: `${r}/commits/${sha}`,
    url: `${r}/commits/${encodeURIComponent(ref)}/status`,
  };
}

/** GitHub's rule: failure if any context failed or errored, pending if any is pending or none exist, else success. */
function combinedState(statuses: ForgeStatus[]): string {
  if (statuses.some((s) => s.state === 'failure' || s.state === 'error')) return 'failure';
  if (statuses.length === 0 || statuses.some((s) => s.state === 'pending')) return 'pending';
  return 'success';
}

export function workflow(item: ForgeWorkflow, urls: ForgeUrls): Json {
  const { repo } = item;
  return {
    id: item.id,
    node_id: nodeId('Workflow', item.id),
    name: item.name,
    path: item.path,
    state: item.state,
    created_at: item.created_at,
    updated_at: item.updated_at,
    url: `${urls.api}/repos/${repo.owner}/${repo.name}/actions/workflows/${item.id}`,
    html_url: `${urls.web}/${repo.owner}/${repo.name}/blob/${repo.default_branch}/${item.path}`,
    badge_url: `${urls.web}/${repo.owner}/${repo.name}/workflows/${encodeURIComponent(item.name)}/badge.svg`,
  };
}

export function workflowRun(run: ForgeRun, urls: ForgeUrls, model: ForgeModel): Json {
  const r = `${urls.api}/repos/${run.repo.owner}/${run.repo.name}`;
  const self = `${r}/actions/runs/${run.id}`;
  const repo = minimalRepository(run.repo, urls, model);
  return {
    id: run.id,
    name: run.workflow.name,
    node_id: nodeId('WorkflowRun', run.id),
    head_branch: run.head_branch,
    head_sha: run.head_sha,
    path: run.workflow.path,
    display_title: run.display_title,
    run_number: run.run_number,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: run.workflow.id,
    check_suite_id: run.id + 2_000_000,
    check_suite_node_id: nodeId('CheckSuite', run.id + 2_000_000),
    url: self,
    html_url: `${urls.web}/${run.repo.owner}/${run.repo.name}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: run.created_at,
    updated_at: run.updated_at,
    actor: userOf(run.actor, urls, model),
    triggering_actor: userOf(run.actor, urls, model),
    run_attempt: run.run_attempt,
    referenced_workflows: [],
    run_started_at: run.run_started_at,
    jobs_url: `${self}/jobs`,
    logs_url: `${self}/logs`,
    check_suite_url: `${r}/check-suites/${run.id + 2_000_000}`,
    artifacts_url: `${self}/artifacts`,
    cancel_url: `${self}/cancel`,
    rerun_url: `${self}/rerun`,
    previous_attempt_url: null,
    workflow_url: `${r}/actions/workflows/${run.workflow.id}`,
    head_commit: {
      id: run.head_sha,
      tree_id: run.head_sha.split('').reverse().join(''),
      message: run.display_title,
      timestamp: run.created_at,
      author: { name: run.actor, email: `${run.actor}@users.noreply.example.test` },
      committer: { name: run.actor, email: `${run.actor}@users.noreply.example.test` },
    },
    repository: repo,
    head_repository: repo,
  };
}

export function issueComment(comment: ForgeComment, urls: ForgeUrls, model: ForgeModel): Json {
  const { repo } = comment;
  const r = `${urls.api}/repos/${repo.owner}/${repo.name}`;
  return {
    id: comment.id,
    node_id: nodeId('IssueComment', comment.id),
    url: `${r}/issues/comments/${comment.id}`,
    html_url: `${urls.web}/${repo.owner}/${repo.name}/pull/${comment.issue_number}#issuecomment-${comment.id}`,
    body: comment.body,
    user: userOf(comment.user, urls, model),
    created_at: comment.created_at,
    updated_at: comment.updated_at,
    issue_url: `${r}/issues/${comment.issue_number}`,
    author_association: comment.user === repo.owner ? 'OWNER' : 'COLLABORATOR',
    performed_via_github_app: null,
  };
}
