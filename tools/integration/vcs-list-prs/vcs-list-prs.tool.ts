import type { RestEndpointMethodTypes } from '@octokit/rest';
import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORGE_READ_CACHE_TTL, FORGE_SETTINGS, ForgeClients, loginOf, OWNER_INPUT, REF_PATTERN, REPO_INPUT, utc } from '../../integrations/forge';

/** Most pull requests one call returns (ten pages of GitHub's largest). */
const MAX_LIMIT = 1000;

type PullSimple = RestEndpointMethodTypes['pulls']['list']['response']['data'][number];

type ListPrsInput = ToolInput<typeof definition>;
type ListPrsOutput = ToolOutput<typeof definition>;

const PR_ITEM = {
  type: 'object',
  required: ['id', 'number', 'title', 'author', 'state', 'draft', 'merged', 'created_at', 'updated_at', 'html_url', 'head', 'base', 'labels'],
  properties: {
    id: { type: 'integer' },
    number: { type: 'integer' },
    title: { type: 'string' },
    author: { type: 'string' },
    state: { type: 'string', enum: ['open', 'closed'] },
    draft: { type: 'boolean' },
    merged: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    html_url: { type: 'string' },
    head: { type: 'string' },
    base: { type: 'string' },
    labels: { type: 'array', items: { type: 'string' } },
  },
} as const;

const definition = defineTool({
  id: 'vcs-list-prs',
  name: 'List Pull Requests',
  category: 'integration',
  description: 'Pull requests of a forge repository (GitHub or GitHub Enterprise Server), filtered by state, base and head branch, sorted, following pagination up to a limit.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  cache_ttl: FORGE_READ_CACHE_TTL,
  open_world: true,
  timeout: 30,
  rate_limit: 100,
  config: FORGE_SETTINGS,
  input: {
    type: 'object',
    properties: {
      owner: OWNER_INPUT,
      repo: REPO_INPUT,
      state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open', description: 'Which pull requests: open, closed (merged ones included) or all.' },
      base: { type: 'string', maxLength: 255, pattern: REF_PATTERN, description: 'Only pull requests into this base branch.' },
      head: { type: 'string', maxLength: 300, pattern: '^(?:[A-Za-z0-9][A-Za-z0-9_.-]*:)?[^\\s:~^?*\\[\\\\]+$', description: 'Only pull requests from this head branch: `branch`, or `user:branch` for a fork.' },
      sort: { type: 'string', enum: ['created', 'updated', 'popularity', 'long-running'], default: 'created', description: 'Order: by creation, last update, comment count (popularity) or age of open pull requests (long-running).' },
      direction: { type: 'string', enum: ['asc', 'desc'], description: 'Sort direction; desc for created, asc otherwise (the forge default).' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 30, description: `Most pull requests returned (at most ${MAX_LIMIT}); pages are followed up to it.` },
    },
    required: ['owner', 'repo'],
  },
  output: {
    type: 'object',
    properties: {
      prs: { type: 'array', items: PR_ITEM, description: 'The pull requests: id (the forge id), number, title, author, state (open/closed), draft, merged, created_at and updated_at (ISO 8601 UTC), html_url, head and base branch, labels.' },
      count: { type: 'integer', description: 'How many pull requests are listed.' },
      has_more: { type: 'boolean', description: 'More pull requests match beyond the limit.' },
    },
    required: ['prs', 'count', 'has_more'],
  },
  examples: [
    {
      name: 'Open pull requests of a repository',
      input: { owner: 'acme', repo: 'widgets' },
      output: {
        prs: [
          {
            id: 300002,
            number: 2,
            title: 'Fix the flaky cache expiry test',
            author: 'grace',
            state: 'open',
            draft: true,
            merged: false,
            created_at: '2025-03-02T14:00:00.000Z',
            updated_at: '2025-03-02T16:45:00.000Z',
            html_url: 'https://forge.example.test:9243/acme/widgets/pull/2',
            head: 'fix-flaky-cache',
            base: 'main',
            labels: ['tests'],
          },
          {
            id: 300001,
            number: 1,
            title: 'Add retries to the webhook client',
            author: 'ada',
            state: 'open',
            draft: false,
            merged: false,
            created_at: '2025-03-01T10:00:00.000Z',
            updated_at: '2025-03-03T08:30:00.000Z',
            html_url: 'https://forge.example.test:9243/acme/widgets/pull/1',
            head: 'retry-webhooks',
            base: 'main',
            labels: ['enhancement'],
          },
        ],
        count: 2,
        has_more: false,
      },
    },
  ],
});

@Tool(definition)
export class VcsListPrsTool implements ToolHandler<typeof definition> {
  constructor(private readonly forges: ForgeClients) {}

  async execute(input: ListPrsInput, ctx: ToolContext<typeof definition>): Promise<ListPrsOutput> {
    const forge = await this.forges.connect(ctx);
    const { items, more } = await forge.list(
      forge.rest.pulls.list,
      { owner: input.owner, repo: input.repo, state: input.state, base: input.base, head: input.head && qualifiedHead(input.head, input.owner), sort: input.sort, direction: input.direction },
      { subject: { owner: input.owner, repo: input.repo, parameter: 'repo' }, limit: input.limit },
    );
    const prs = items.map(summary);
    return { prs, count: prs.length, has_more: more };
  }
}

/** GitHub filters `head` only in the `user:branch` form; a bare branch means the repository owner's. */
function qualifiedHead(head: string, owner: string): string {
  return head.includes(':') ? head : `${owner}:${head}`;
}

function summary(pull: PullSimple) {
  return {
    id: pull.id,
    number: pull.number,
    title: pull.title,
    author: loginOf(pull.user),
    state: pull.state as 'open' | 'closed',
    draft: pull.draft ?? false,
    merged: pull.merged_at !== null,
    created_at: utc(pull.created_at),
    updated_at: utc(pull.updated_at),
    html_url: pull.html_url,
    head: pull.head.ref,
    base: pull.base.ref,
    labels: pull.labels.map((label) => label.name),
  };
}
