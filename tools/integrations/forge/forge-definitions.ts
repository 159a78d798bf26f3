import type { ToolInputProperty, ToolSettingDefinition } from '@tos/sdk';

/** The settings every forge tool declares; an account's FORGE_TOKEN secret overrides the operator's. */
export const FORGE_SETTINGS = {
  FORGE_API_URL: {
    type: 'url',
    default: 'https://api.github.com',
    description: 'REST base URL of the forge: https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server.',
  },
  FORGE_TOKEN: {
    type: 'string',
    secret: true,
    description: "Token the forge tools call with (a fine-grained or classic personal access token, or an app installation token). An account's own FORGE_TOKEN secret takes precedence; reads go anonymous when neither is set.",
  },
} satisfies Record<string, ToolSettingDefinition>;

/** Seconds a read tool's result is cached: forge state moves, a short TTL keeps answers fresh. */
export const FORGE_READ_CACHE_TTL = 30;

/**
 * Owner and repository names as GitHub allows them. The patterns also keep each one a single,
 * non-dot path segment, so an input can never step elsewhere in the API (`..`, `/`).
 */
export const OWNER_INPUT = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?$',
  description: 'Owner of the repository: a user or organisation login.',
  // Gateways in front of the MCP door can route or police by repository without reading bodies.
  'x-mcp-header': 'Owner',
} as const satisfies ToolInputProperty;

export const REPO_INPUT = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9_.-]+$',
  description: 'Repository name (without the owner).',
  'x-mcp-header': 'Repo',
} as const satisfies ToolInputProperty;

export const PULL_NUMBER_INPUT = {
  type: 'integer',
  minimum: 1,
  maximum: 2_147_483_647,
  description: 'Pull request number (the #number, not its id).',
} as const satisfies ToolInputProperty;

export const WORKFLOW_INPUT = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^(?:[0-9]+|[A-Za-z0-9_.-]+\\.ya?ml)$',
  description: 'The workflow: its file name under .github/workflows (ci.yml) or its numeric id.',
} as const satisfies ToolInputProperty;

/** A branch or tag name as git allows it (no `..`, no leading `-`, no spaces or control characters). */
export const REF_PATTERN = '^(?!-)(?!.*\\.\\.)(?!.*//)[^\\s~^:?*\\[\\\\\\x00-\\x1f\\x7f]+$';
