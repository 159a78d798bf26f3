import type { AskingContext, PromptDefinition, PromptHandler, PromptMessage } from '../tools/sdk';

type Args = Readonly<Record<string, string>>;

/** A prompt that asks the model to do a job with the service's tools, step by step. */
function job(definition: PromptDefinition, steps: (args: Args, ctx: AskingContext) => string[] | Promise<string[]>): { definition: PromptDefinition; handler: PromptHandler } {
  return {
    definition,
    handler: {
      get: async (args, ctx): Promise<PromptMessage[]> => [{ role: 'user', content: { type: 'text', text: (await steps(args, ctx)).map((step, i) => `${i + 1}. ${step}`).join('\n') } }],
    },
  };
}

/**
 * What the user lets the model change while triaging, asked once when the client can show a form
 * (MCP 2026-07-28 with elicitation); nothing beyond reading otherwise, or when the user declines.
 */
async function triageActions(ctx: AskingContext): Promise<{ rerun: boolean; comment: boolean }> {
  if (!ctx.canAsk('elicitation/create')) return { rerun: false, comment: false };
  const answer = await ctx.requestInput('allowed_actions', {
    method: 'elicitation/create',
    params: {
      message: 'Besides reading the run, its logs and the pull request, what may the assistant do?',
      requestedSchema: {
        type: 'object',
        properties: {
          rerun: { type: 'boolean', title: 'Dispatch the workflow again once, after a fix is pushed', default: false },
          comment: { type: 'boolean', title: 'Post the diagnosis as a comment on the pull request', default: false },
        },
      },
    },
  });
  const content = answer.action === 'accept' ? ((answer.content ?? {}) as Record<string, unknown>) : {};
  return { rerun: content.rerun === true, comment: content.comment === true };
}

const repository = (args: Args) => `owner "${args.owner}", repo "${args.repo}"`;

/** The jobs people most often chain tools for. */
export const PRODUCT_PROMPTS = [
  job(
    {
      name: 'triage-failing-workflow',
      title: 'Triage a failing workflow run',
      description: 'Find the latest failed run of a CI workflow, read why it failed, and propose a fix.',
      arguments: [
        { name: 'owner', description: 'Repository owner.', required: true },
        { name: 'repo', description: 'Repository name.', required: true },
        { name: 'workflow', description: 'Workflow file name or id (e.g. ci.yml).', required: true },
      ],
    },
    async (args, ctx) => {
      const allowed = await triageActions(ctx);
      return [
        `Call vcs-workflow-status with ${repository(args)}, workflow "${args.workflow}" and find the most recent run whose conclusion is failure.`,
        'If its logs or test reports are in a workspace, call log-analysis on the logs and test-report on the JUnit files to find the failing step and its error signatures.',
        `If the run belongs to a pull request, call vcs-get-pr with ${repository(args)} and that number to see the files changed.`,
        'Say which change most likely broke the run and propose a fix.',
        ...(allowed.comment ? [`The user allows one comment: post the diagnosis on the pull request with vcs-comment-pr (${repository(args)}).`] : []),
        ...(allowed.rerun ? [`The user allows one re-run: once a fix is pushed, dispatch workflow "${args.workflow}" on its branch with vcs-workflow and follow it with vcs-workflow-status.`] : []),
        allowed.comment || allowed.rerun ? 'Do nothing else that changes the repository without asking.' : 'Do not re-run or comment anything without asking.',
      ];
    },
  ),
  job(
    {
      name: 'security-review',
      title: 'Security review of a workspace',
      description: 'Scan a workspace for code weaknesses, vulnerable dependencies, leaked secrets and licence problems, and rank what to fix.',
      arguments: [
        { name: 'workspace', description: 'Workspace id (ws_…) holding the code.', required: true },
        { name: 'path', description: 'Folder inside the workspace (default: its root).' },
      ],
    },
    (args) => {
      const where = `workspace "${args.workspace}"${args.path ? `, path "${args.path}"` : ''}`;
      return [
        `Call sast-scan, secret-scan, dependency-check and license-check on ${where}.`,
        `Call iac-scan on ${where} if it holds infrastructure as code (Terraform, CloudFormation, Helm charts, Kubernetes manifests, Compose files or Dockerfiles).`,
        'Group the findings by severity, drop duplicates, and list the ten most urgent with file, line and the fix.',
      ];
    },
  ),
  job(
    {
      name: 'investigate-alert',
      title: 'Investigate an alert',
      description: 'Check a service that is alerting: is it up, what do its metrics say, what do its logs say.',
      arguments: [
        { name: 'url', description: 'Health URL of the service.', required: true },
        { name: 'query', description: 'A PromQL expression for the alerting metric.' },
      ],
    },
    (args) => [
      `Call health-check on "${args.url}".`,
      args.query ? `Call metrics-collect with source "query_range" and query "${args.query}" over the last hour.` : 'Call metrics-collect on the service\'s metrics endpoint.',
      'If logs are in a workspace, call log-analysis on them for the same hour.',
      'Say whether the alert is real, what changed, and what to do next; silence or notify only if asked.',
    ],
  ),
];
