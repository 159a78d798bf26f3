import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORGE_READ_CACHE_TTL, FORGE_SETTINGS, ForgeClients, OWNER_INPUT, REF_PATTERN, REPO_INPUT, RUN_SCHEMA, runSummary, utc, WORKFLOW_INPUT } from '../../integrations/forge';

/** GitHub's largest page: the latest runs, one request. */
const MAX_RUNS = 100;
/** The `status` filter GitHub's list-workflow-runs accepts (statuses and conclusions). */
const STATUS_FILTERS = ['completed', 'action_required', 'cancelled', 'failure', 'neutral', 'skipped', 'stale', 'success', 'timed_out', 'in_progress', 'queued', 'requested', 'waiting', 'pending'] as const;

type WorkflowStatusInput = ToolInput<typeof definition>;
type WorkflowStatusOutput = ToolOutput<typeof definition>;

const definition = defineTool({
  id: 'vcs-workflow-status',
  name: 'Workflow Status',
  category: 'integration',
  description: 'The latest runs of a forge workflow (GitHub Actions): status, conclusion, event, branch, head SHA, run number, timings and URL, optionally filtered by branch, status or event.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  cache_ttl: 15,
  open_world: true,
  timeout: 30,
  rate_limit: 100,
  config: FORGE_SETTINGS,
  input: {
    type: 'object',
    properties: {
      owner: OWNER_INPUT,
      repo: REPO_INPUT,
      workflow: WORKFLOW_INPUT,
      branch: { type: 'string', maxLength: 255, pattern: REF_PATTERN, description: 'Only runs on this branch.' },
      status: { type: 'string', enum: STATUS_FILTERS, description: 'Only runs with this status or conclusion (completed, in_progress, queued, success, failure, cancelled, …).' },
      event: { type: 'string', maxLength: 64, pattern: '^[a-z_]+$', description: 'Only runs triggered by this event (push, pull_request, workflow_dispatch, schedule, …).' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_RUNS, default: 10, description: `How many of the latest runs (at most ${MAX_RUNS}).` },
    },
    required: ['owner', 'repo', 'workflow'],
  },
  output: {
    type: 'object',
    properties: {
      workflow: {
        type: 'object',
        description: 'The workflow: id, name, path, state (active, disabled_manually, …), html_url.',
        properties: { id: { type: 'integer' }, name: { type: 'string' }, path: { type: 'string' }, state: { type: 'string' }, html_url: { type: 'string' } },
      },
      runs: { type: 'array', items: RUN_SCHEMA, description: 'The latest matching runs, newest first: id, run_number, run_attempt, title, status, conclusion, event, branch, head_sha, actor, html_url, created_at, run_started_at, updated_at (ISO 8601 UTC), duration_seconds (null until completed).' },
      count: { type: 'integer', description: 'Runs listed.' },
      total_count: { type: 'integer', description: 'Runs matching the filters on the forge.' },
      latest_conclusion: { type: ['string', 'null'], description: 'Conclusion of the newest completed run listed (success, failure, …), null when none completed.' },
      latest_completed_at: { type: ['string', 'null'], description: 'When that run last changed (its end), ISO 8601 UTC.' },
    },
    required: ['workflow', 'runs', 'count', 'total_count', 'latest_conclusion', 'latest_completed_at'],
  },
  examples: [
    {
      name: 'Latest CI runs on main',
      input: { owner: 'acme', repo: 'widgets', workflow: 'ci.yml', branch: 'main', limit: 2 },
      output: {
        workflow: {
          id: 800001,
          name: 'CI',
          path: '.github/workflows/ci.yml',
          state: 'active',
          html_url: 'https://forge.example.test:9243/acme/widgets/blob/main/.github/workflows/ci.yml',
        },
        runs: [
          {
            id: 9000006,
            run_number: 6,
            run_attempt: 1,
            title: 'Merge pull request',
            status: 'in_progress',
            conclusion: null,
            event: 'push',
            branch: 'main',
            head_sha: 'e66701d6d95397115d3192647dda4d9fa392a92a',
            actor: 'grace',
            html_url: 'https://forge.example.test:9243/acme/widgets/actions/runs/9000006',
            created_at: '2025-03-03T09:00:00.000Z',
            run_started_at: '2025-03-03T09:00:12.000Z',
            updated_at: '2025-03-03T09:02:00.000Z',
            duration_seconds: null,
          },
          {
            id: 9000003,
            run_number: 3,
            run_attempt: 1,
            title: 'Merge pull request',
            status: 'completed',
            conclusion: 'success',
            event: 'push',
            branch: 'main',
            head_sha: 'e66701d6d95397115d3192647dda4d9fa392a92a',
            actor: 'grace',
            html_url: 'https://forge.example.test:9243/acme/widgets/actions/runs/9000003',
            created_at: '2025-03-02T11:00:00.000Z',
            run_started_at: '2025-03-02T11:00:10.000Z',
            updated_at: '2025-03-02T11:05:10.000Z',
            duration_seconds: 300,
          },
        ],
        count: 2,
        total_count: 3,
        latest_conclusion: 'success',
        latest_completed_at: '2025-03-02T11:05:10.000Z',
      },
    },
  ],
});

@Tool(definition)
export class VcsWorkflowStatusTool implements ToolHandler<typeof definition> {
  constructor(private readonly forges: ForgeClients) {}

  async execute(input: WorkflowStatusInput, ctx: ToolContext<typeof definition>): Promise<WorkflowStatusOutput> {
    const forge = await this.forges.connect(ctx);
    const subject = { owner: input.owner, repo: input.repo, parameter: 'workflow', value: input.workflow };
    const where = { owner: input.owner, repo: input.repo, workflow_id: input.workflow };
    const [workflow, listed] = await Promise.all([
      forge.read(forge.rest.actions.getWorkflow, where, subject),
      forge.read(forge.rest.actions.listWorkflowRuns, { ...where, branch: input.branch, status: input.status, event: input.event, per_page: input.limit, exclude_pull_requests: true }, subject),
    ]);
    const runs = listed.workflow_runs.slice(0, input.limit).map(runSummary);
    const latestCompleted = runs.find((run) => run.status === 'completed');
    return {
      workflow: { id: workflow.id, name: workflow.name, path: workflow.path, state: workflow.state, html_url: workflow.html_url },
      runs,
      count: runs.length,
      total_count: listed.total_count,
      latest_conclusion: latestCompleted?.conclusion ?? null,
      latest_completed_at: latestCompleted ? utc(latestCompleted.updated_at) : null,
    };
  }
}
