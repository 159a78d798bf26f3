/** Pull requests, their files, reviews and issue comments in GitHub's shapes. */
import type { ForgeComment, ForgeFile, ForgeModel, ForgePull, ForgeRepo, ForgeReview } from '../model';
import { repository, userOf } from './accounts';
import { nodeId, type ForgeUrls, type Json } from './common';

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
