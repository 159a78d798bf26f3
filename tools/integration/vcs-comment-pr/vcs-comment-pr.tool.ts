import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORGE_SETTINGS, type ForgeClient, ForgeClients, OWNER_INPUT, PULL_NUMBER_INPUT, REPO_INPUT } from '../../integrations/forge';

/** GitHub's limit on a comment body is 65536 characters; the hidden marker line takes the rest. */
const MAX_BODY = 65_000;
/** Comments searched for the marker (30 pages); a thread longer than that is refused, not duplicated. */
const MAX_SCANNED = 3000;

type CommentInput = ToolInput<typeof definition>;
type CommentOutput = ToolOutput<typeof definition>;

/** The hidden line that identifies the tool's comment: an HTML comment GitHub does not render. */
export function markerLine(marker: string): string {
  return `<!-- tos-comment-marker: ${marker} -->`;
}

const definition = defineTool({
  id: 'vcs-comment-pr',
  name: 'Comment on Pull Request',
  category: 'integration',
  description: 'Creates a comment on a forge pull request, or with a marker updates the comment it made earlier under that marker (a hidden line in the body) instead of adding a duplicate: one living status comment per marker.',
  status: 'ready',
  version: '1.0.0',
  // With a marker it overwrites its earlier comment.
  effects: 'destructive',
  idempotent: false,
  open_world: true,
  timeout: 60,
  rate_limit: 30,
  config: FORGE_SETTINGS,
  input: {
    type: 'object',
    properties: {
      owner: OWNER_INPUT,
      repo: REPO_INPUT,
      pull_number: PULL_NUMBER_INPUT,
      body: { type: 'string', minLength: 1, maxLength: MAX_BODY, description: 'The comment, in GitHub-flavoured Markdown.' },
      marker: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
        description: 'Identifies this comment across calls: the earlier comment carrying the same marker is edited instead of posting a new one (letters, digits, . _ : -).',
      },
    },
    required: ['owner', 'repo', 'pull_number', 'body'],
  },
  output: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: ['created', 'updated'], description: 'Whether a comment was created or the marked one updated.' },
      comment_id: { type: 'integer', description: 'The comment id.' },
      html_url: { type: 'string', description: 'Link to the comment.' },
      marker: { type: ['string', 'null'], description: 'The marker the comment carries, if any.' },
    },
    required: ['action', 'comment_id', 'html_url', 'marker'],
  },
  examples: [
    {
      name: 'Update the coverage comment (marker) instead of adding another',
      input: { owner: 'acme', repo: 'widgets', pull_number: 1, body: 'Coverage: 91.2% (+0.4%)', marker: 'coverage-report' },
      output: {
        action: 'updated',
        comment_id: 500002,
        html_url: 'https://forge.example.test:9243/acme/widgets/pull/1#issuecomment-500002',
        marker: 'coverage-report',
      },
    },
  ],
});

@Tool(definition)
export class VcsCommentPrTool implements ToolHandler<typeof definition> {
  constructor(private readonly forges: ForgeClients) {}

  async execute(input: CommentInput, ctx: ToolContext<typeof definition>): Promise<CommentOutput> {
    const forge = await this.forges.connect(ctx, { requireToken: true });
    const where = { owner: input.owner, repo: input.repo };
    const subject = { ...where, parameter: 'pull_number', value: input.pull_number };
    // Issue comments also exist on plain issues: make sure this number is a pull request.
    await forge.read(forge.rest.pulls.get, { ...where, pull_number: input.pull_number }, subject);
    ctx.progress(20);

    const hidden = input.marker === undefined ? null : markerLine(input.marker);
    const body = hidden ? `${input.body}\n\n${hidden}` : input.body;
    const unprocessable = (message: string) => (/body/i.test(message) ? 'body' : null);
    const earlier = hidden ? await markedComment(forge, input, hidden) : undefined;
    ctx.progress(60);
    if (earlier) {
      const { data } = await forge.write(forge.rest.issues.updateComment, { ...where, comment_id: earlier, body }, { subject, unprocessable });
      return { action: 'updated', comment_id: data.id, html_url: data.html_url, marker: input.marker ?? null };
    }
    const { data } = await forge.write(forge.rest.issues.createComment, { ...where, issue_number: input.pull_number, body }, { subject, unprocessable });
    return { action: 'created', comment_id: data.id, html_url: data.html_url, marker: input.marker ?? null };
  }
}

/** The id of the first comment carrying the marker line, searched page by page (oldest first). */
async function markedComment(forge: ForgeClient, input: CommentInput, hidden: string): Promise<number | undefined> {
  const carries = (comment: { id: number; body?: string }) => comment.body?.split('\n').some((line) => line.trim() === hidden) ?? false;
  const { items, more } = await forge.list(
    forge.rest.issues.listComments,
    { owner: input.owner, repo: input.repo, issue_number: input.pull_number },
    { subject: { owner: input.owner, repo: input.repo, parameter: 'pull_number', value: input.pull_number }, limit: MAX_SCANNED, stopWhen: carries },
  );
  const found = items.find(carries);
  if (!found && more) {
    throw new ToolError(`The pull request has more than ${MAX_SCANNED} comments; the marked comment was not among the first ${MAX_SCANNED}, so none was added (it would risk a duplicate)`, { details: { marker: input.marker } });
  }
  return found?.id;
}
