import type { ToolSettingDefinition } from '@tos/sdk';

/** The npm registry asked for package manifests, and the token for a private one. */
export const NPM_REGISTRY_SETTINGS = {
  REGISTRY_URL: { type: 'url', default: 'https://registry.npmjs.org', description: 'npm registry asked for the licence of packages the workspace does not record.' },
  REGISTRY_TOKEN: { type: 'string', secret: true, description: "Bearer token for a private registry; an account's own secret of that name wins." },
} satisfies Record<string, ToolSettingDefinition>;
