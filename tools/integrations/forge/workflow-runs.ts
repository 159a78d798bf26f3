import type { RestEndpointMethodTypes } from '@octokit/rest';
import { loginOf, utc } from './values';

export type WorkflowRun = RestEndpointMethodTypes['actions']['getWorkflowRun']['response']['data'];

/** One workflow run as the vcs tools report it: identity, outcome, where it ran, timings. */
export function runSummary(run: WorkflowRun) {
  const started = run.run_started_at ?? run.created_at;
  return {
    id: run.id,
    run_number: run.run_number,
    run_attempt: run.run_attempt ?? 1,
    title: run.display_title,
    status: run.status,
    conclusion: run.conclusion,
    event: run.event,
    branch: run.head_branch,
    head_sha: run.head_sha,
    actor: loginOf(run.actor),
    html_url: run.html_url,
    created_at: utc(run.created_at),
    run_started_at: utc(started),
    updated_at: utc(run.updated_at),
    // A finished run's last update is its end; an unfinished one has no duration yet.
    duration_seconds: run.status === 'completed' ? Math.max(Math.round((Date.parse(run.updated_at) - Date.parse(started)) / 1000), 0) : null,
  };
}

const nullableString = { type: ['string', 'null'] } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

/** JSON schema of `runSummary`'s result, for the tools' declared outputs. */
export const RUN_SCHEMA = {
  type: 'object',
  required: ['id', 'run_number', 'status', 'conclusion', 'event', 'branch', 'head_sha', 'html_url', 'created_at', 'updated_at', 'duration_seconds'],
  properties: {
    id: { type: 'integer' },
    run_number: { type: 'integer' },
    run_attempt: { type: 'integer' },
    title: { type: 'string' },
    status: nullableString,
    conclusion: nullableString,
    event: { type: 'string' },
    branch: nullableString,
    head_sha: { type: 'string' },
    actor: { type: 'string' },
    html_url: { type: 'string' },
    created_at: dateTime,
    run_started_at: dateTime,
    updated_at: dateTime,
    duration_seconds: { type: ['integer', 'null'] },
  },
} as const;
