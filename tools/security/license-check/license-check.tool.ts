import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput, workspacePathInput } from '@tos/sdk';
import { NPM_REGISTRY_SETTINGS } from '../../integrations/npm-registry';
import { LICENSE_CHECK_EXAMPLES } from './examples';
import { licenseCheck, MAX_LICENSES_LISTED } from './check';
import { LICENSE_STATUSES } from '../../shared/licenses/policy';
import { LOCKFILE_NAMES_TEXT, MAX_LOCKFILES } from '../../shared/lockfiles';
import { countsOutput, lockfilesOutput, pageOutputs } from '../../shared/scan';

export type LicenseCheckInput = ToolInput<typeof definition>;
export type LicenseCheckOutput = ToolOutput<typeof definition>;

const spdxList = (what: string) => ({ type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 }, description: what }) as const;

const definition = defineTool({
  id: 'license-check',
  name: 'License Check',
  category: 'security',
  description:
    'Checks the licence of every locked dependency against an allow/deny SPDX policy (expressions such as MIT OR Apache-2.0 honoured); unknown and non-SPDX licences are flagged. Licences come from the lockfile, the installed package.json (nested installs too), else the npm registry; one that cannot be reached leaves its packages unknown, with a warning.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  open_world: true,
  isolated: true,
  timeout: 120,
  rate_limit: 30,
  config: NPM_REGISTRY_SETTINGS,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      path: workspacePathInput(`A lockfile (${LOCKFILE_NAMES_TEXT}) in the workspace, or a directory searched for them (at most ${MAX_LOCKFILES}).`),
      allow: spdxList('SPDX licence ids a dependency may be used under (an expression passes when one choice uses only these). Empty: every valid licence not denied passes.'),
      deny: spdxList('SPDX licence ids no dependency may require (e.g. AGPL-3.0-only); a licence that includes a denied one counts as denied.'),
      include_dev: { type: 'boolean', default: true, description: 'Also check packages installed only for development.' },
      registry_lookup: { type: 'boolean', default: true, description: 'Ask the npm registry (REGISTRY_URL) for licences the workspace does not record; off: they are unknown.' },
      max_results: { type: 'integer', minimum: 1, maximum: 1000, default: 200, description: 'Most violations returned, worst first.' },
    },
  },
  output: {
    type: 'object',
    properties: {
      passed: { type: 'boolean', description: 'True when every package is allowed.' },
      violations: {
        type: 'array',
        description: 'Packages that are denied, unapproved, invalid (not SPDX) or unknown, in that order.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['package', 'version', 'ecosystem', 'license', 'status', 'reason', 'source', 'file', 'direct', 'dev'],
          properties: {
            package: { type: 'string' },
            version: { type: 'string' },
            ecosystem: { type: 'string' },
            license: { type: ['string', 'null'], description: 'As declared; null when none was found.' },
            status: { enum: [...LICENSE_STATUSES] },
            reason: { type: 'string' },
            source: { enum: ['lockfile', 'installed', 'registry', null], description: 'Where the licence was read.' },
            file: { type: 'string', description: 'The lockfile.' },
            direct: { type: 'boolean' },
            dev: { type: 'boolean' },
          },
        },
      },
      ...pageOutputs('Violations'),
      summary: countsOutput(LICENSE_STATUSES, 'Packages per status.'),
      licenses: {
        type: 'array',
        description: `Declared licences and how many packages use each, most used first (at most ${MAX_LICENSES_LISTED}).`,
        items: { type: 'object', additionalProperties: false, required: ['license', 'packages'], properties: { license: { type: 'string' }, packages: { type: 'integer' } } },
      },
      packages_checked: { type: 'integer', description: 'Package versions checked (per lockfile).' },
      lockfiles: lockfilesOutput(),
      warnings: { type: 'array', items: { type: 'string' }, description: 'What the check could not learn: a registry that could not be reached (its packages are unknown).' },
    },
    required: ['passed', 'violations', 'count', 'total', 'truncated', 'summary', 'licenses', 'packages_checked', 'lockfiles', 'warnings'],
  },
  examples: LICENSE_CHECK_EXAMPLES,
});

@Tool(definition)
export class LicenseCheckTool implements ToolHandler<typeof definition> {
  execute(input: LicenseCheckInput, ctx: ToolContext<typeof definition>): Promise<LicenseCheckOutput> {
    return licenseCheck(input, ctx);
  }
}
