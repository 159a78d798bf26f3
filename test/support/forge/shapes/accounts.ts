/** Users and repositories in GitHub's shapes (simple-user, public-user, minimal/full repository). */
import type { ForgeModel, ForgeRepo, ForgeUser } from '../model';
import { nodeId, type ForgeUrls, type Json } from './common';

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

export function userOf(login: string, urls: ForgeUrls, model: ForgeModel): Json {
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
