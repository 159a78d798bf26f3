/** Check runs, commit statuses, workflows and workflow runs in GitHub's shapes. */
import type { ForgeCheckRun, ForgeModel, ForgeRepo, ForgeRun, ForgeStatus, ForgeWorkflow } from '../model';
import { minimalRepository, userOf } from './accounts';
import { nodeId, type ForgeUrls, type Json } from './common';

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
