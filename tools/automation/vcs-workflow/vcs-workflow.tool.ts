import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORGE_SETTINGS, type ForgeClient, ForgeClients, OWNER_INPUT, REF_PATTERN, REPO_INPUT, RUN_SCHEMA, runSummary, WORKFLOW_INPUT, type WorkflowRun } from '../../integrations/forge';

/** github.com takes up to 25 dispatch inputs (an Enterprise Server 10). */
const MAX_INPUTS = 25;
const MAX_WAIT_SECONDS = 120;
/** First look for the run after this, then back off to the ceiling (304s cost no rate-limit budget). */
const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 5000;
/** Dispatched runs examined per look: the newest page, enough for a busy workflow. */
const RUNS_PER_LOOK = 30;
/** A run just started has no duration or end yet: what identifies it and where to follow it. */
const STARTED_RUN_MEMBERS = ['id', 'run_number', 'status', 'conclusion', 'event', 'branch', 'head_sha', 'actor', 'html_url', 'created_at'] as const;

type WorkflowInput = ToolInput<typeof definition>;
type WorkflowOutput = ToolOutput<typeof definition>;

const definition = defineTool({
  id: 'vcs-workflow',
  name: 'Dispatch Workflow',
  category: 'automation',
  description: 'Dispatches a forge workflow run (GitHub Actions workflow_dispatch) on a ref with inputs, then finds the run it started (asking the forge for it, else watching for it within wait_seconds) and reports its id, number, status and URL.',
  status: 'ready',
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 180,
  rate_limit: 30,
  config: FORGE_SETTINGS,
  input: {
    type: 'object',
    properties: {
      owner: OWNER_INPUT,
      repo: REPO_INPUT,
      workflow: WORKFLOW_INPUT,
      ref: { type: 'string', minLength: 1, maxLength: 255, pattern: REF_PATTERN, description: "Branch or tag to run the workflow on (refs/heads/… and refs/tags/… accepted); the repository's default branch when omitted." },
      // Not `inputs`: a flat REST body with an `inputs` object is read as the invoke envelope (docs/API.md#request-bodies).
      workflow_inputs: {
        type: 'object',
        maxProperties: MAX_INPUTS,
        additionalProperties: { type: ['string', 'number', 'boolean'], maxLength: 1024 },
        description: `The workflow_dispatch inputs the workflow declares (at most ${MAX_INPUTS}; strings up to 1024 characters, numbers, booleans).`,
      },
      wait_seconds: { type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS, default: 30, description: `How long to look for the started run (0: dispatch only; at most ${MAX_WAIT_SECONDS}).` },
    },
    required: ['owner', 'repo', 'workflow'],
  },
  output: {
    type: 'object',
    properties: {
      dispatched: { type: 'boolean', description: 'The forge accepted the dispatch (always true in a result; a refusal is an error).' },
      workflow: { type: 'string', description: 'The workflow dispatched.' },
      ref: { type: 'string', description: 'The ref it runs on.' },
      found: { type: 'boolean', description: 'The started run was identified.' },
      run: {
        type: ['object', 'null'],
        properties: pick(RUN_SCHEMA.properties, STARTED_RUN_MEMBERS),
        description: 'The started run: id, run_number, status, conclusion, event, branch, head_sha, actor, html_url, created_at; null when it did not appear within wait_seconds. vcs-workflow-status follows it.',
      },
    },
    required: ['dispatched', 'workflow', 'ref', 'found', 'run'],
  },
  examples: [
    {
      name: 'Deploy main to staging',
      input: { owner: 'acme', repo: 'widgets', workflow: 'deploy.yml', ref: 'main', workflow_inputs: { environment: 'staging' } },
      output: {
        dispatched: true,
        workflow: 'deploy.yml',
        ref: 'main',
        found: true,
        run: {
          id: 9000007,
          run_number: 1,
          status: 'queued',
          conclusion: null,
          event: 'workflow_dispatch',
          branch: 'main',
          head_sha: 'e66701d6d95397115d3192647dda4d9fa392a92a',
          actor: 'tos-bot',
          html_url: 'https://forge.example.test:9243/acme/widgets/actions/runs/9000007',
          created_at: '2026-11-22T19:39:52.000Z',
        },
      },
      varies: ['run.id', 'run.run_number', 'run.html_url', 'run.created_at'],
    },
  ],
});

@Tool(definition)
export class VcsWorkflowTool implements ToolHandler<typeof definition> {
  constructor(private readonly forges: ForgeClients) {}

  async execute(input: WorkflowInput, ctx: ToolContext<typeof definition>): Promise<WorkflowOutput> {
    const forge = await this.forges.connect(ctx, { requireToken: true });
    const where = { owner: input.owner, repo: input.repo };
    const subject = { ...where, parameter: 'workflow', value: input.workflow };
    const ref = input.ref ?? (await forge.read(forge.rest.repos.get, where, { ...where, parameter: 'repo' })).default_branch;

    // Runs that exist before the dispatch cannot be the one it starts.
    const earlier = new Set((await this.dispatchedRuns(forge, input)).map((run) => run.id));
    ctx.progress(10, 'dispatching');
    const dispatch = await forge.write(
      forge.rest.actions.createWorkflowDispatch,
      { ...where, workflow_id: input.workflow, ref, inputs: input.workflow_inputs, return_run_details: true },
      { subject, unprocessable: unprocessableParameter },
    );
    ctx.progress(20, 'dispatched');
    const result = { dispatched: true, workflow: input.workflow, ref };

    // github.com names the run when asked; an Enterprise Server answers 204 and the run is looked for.
    const runId = (dispatch.data as { workflow_run_id?: number } | undefined)?.workflow_run_id;
    if (runId !== undefined) {
      const run = await forge.read(forge.rest.actions.getWorkflowRun, { ...where, run_id: runId }, subject);
      return { ...result, found: true, run: startedRun(run) };
    }
    const run = await this.findStartedRun(forge, input, shortRef(ref), earlier, ctx);
    return { ...result, found: run !== null, run: run && startedRun(run) };
  }

  /** Polls the workflow's dispatched runs, backing off, until a new one on `branch` shows up or the wait ends. */
  private async findStartedRun(forge: ForgeClient, input: WorkflowInput, branch: string, earlier: Set<number>, ctx: ToolContext): Promise<WorkflowRun | null> {
    const deadline = Date.now() + input.wait_seconds * 1000;
    for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, MAX_POLL_MS)) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      // The last look happens at the deadline, not a back-off step before it.
      await ctx.sleep(Math.min(pause, remaining));
      const fresh = (await this.dispatchedRuns(forge, input)).filter((run) => !earlier.has(run.id) && run.head_branch === branch);
      // The earliest new run is the closest to this dispatch.
      if (fresh.length) return fresh.reduce((first, run) => (run.id < first.id ? run : first));
      ctx.progress(20 + Math.round(70 * (1 - Math.max(deadline - Date.now(), 0) / (input.wait_seconds * 1000))), 'waiting for the run to appear');
    }
  }

  private async dispatchedRuns(forge: ForgeClient, input: WorkflowInput): Promise<WorkflowRun[]> {
    const listed = await forge.read(
      forge.rest.actions.listWorkflowRuns,
      { owner: input.owner, repo: input.repo, workflow_id: input.workflow, event: 'workflow_dispatch', per_page: RUNS_PER_LOOK, exclude_pull_requests: true },
      { owner: input.owner, repo: input.repo, parameter: 'workflow', value: input.workflow },
    );
    return listed.workflow_runs as WorkflowRun[];
  }
}

function startedRun(run: WorkflowRun) {
  return pick(runSummary(run), STARTED_RUN_MEMBERS);
}

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;
}

/** Which input GitHub's 422 on a dispatch is about: the ref, the workflow inputs, or the workflow (no dispatch trigger). */
function unprocessableParameter(message: string): string | null {
  if (/workflow_dispatch/i.test(message)) return 'workflow';
  if (/\bref\b/i.test(message)) return 'ref';
  if (/input/i.test(message)) return 'workflow_inputs';
  return null;
}

/** Runs name their branch or tag without the refs/heads/ or refs/tags/ prefix. */
function shortRef(ref: string): string {
  return ref.replace(/^refs\/(?:heads|tags)\//, '');
}
