import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput, workspacePathInput } from '@tos/sdk';
import { dependencyCheck, MAX_SKIPPED_LISTED } from './scan';
import { DEPENDENCY_CHECK_EXAMPLES } from './examples';
import { LOCKFILE_NAMES_TEXT, MAX_LOCKFILE_BYTES, MAX_LOCKFILES } from '../../shared/lockfiles';
import { ADVISORY_DATA_OUTPUT, OSV_SETTINGS, SEVERITIES, SEVERITY_FILTER_INPUTS } from '../../integrations/osv';
import { countsOutput, lockfilesOutput, pageOutputs } from '../../shared/scan';

export type DependencyCheckInput = ToolInput<typeof definition>;
export type DependencyCheckOutput = ToolOutput<typeof definition>;

const definition = defineTool({
  id: 'dependency-check',
  name: 'Dependency Check',
  category: 'security',
  description:
    'Finds known vulnerabilities (OSV advisories) of the dependencies pinned in lockfiles: package-lock.json, yarn.lock, pnpm-lock.yaml, requirements.txt and go.sum, matched by version range (SemVer, PEP 440, Go).',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  open_world: true,
  isolated: true,
  timeout: 120,
  task_support: 'optional',
  rate_limit: 30,
  config: OSV_SETTINGS,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      path: workspacePathInput(`A lockfile (${LOCKFILE_NAMES_TEXT}) in the workspace, or a directory searched for them (installed dependencies and .git are not walked; at most ${MAX_LOCKFILES} lockfiles of up to ${MAX_LOCKFILE_BYTES / 1024 / 1024} MiB).`),
      include_dev: { type: 'boolean', default: true, description: 'Also check packages installed only for development.' },
      ...SEVERITY_FILTER_INPUTS,
    },
  },
  output: {
    type: 'object',
    properties: {
      vulnerabilities: {
        type: 'array',
        description: 'One entry per advisory and installed package version per lockfile, by severity, CVSS score, package and id.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'aliases', 'summary', 'severity', 'cvss_score', 'cvss_vector', 'package', 'ecosystem', 'installed_version', 'fixed_versions', 'file', 'direct', 'dev', 'dependency_path'],
          properties: {
            id: { type: 'string', description: 'OSV id (GHSA-…, PYSEC-…, GO-…).' },
            aliases: { type: 'array', items: { type: 'string' }, description: 'Other ids of the same vulnerability (CVE-…).' },
            summary: { type: 'string' },
            severity: { enum: [...SEVERITIES], description: 'From the CVSS score (v4, else v3, else v2), else the database label.' },
            cvss_score: { type: ['number', 'null'] },
            cvss_vector: { type: ['string', 'null'] },
            package: { type: 'string' },
            ecosystem: { enum: ['npm', 'PyPI', 'Go'] },
            installed_version: { type: 'string' },
            fixed_versions: { type: 'array', items: { type: 'string' }, description: 'Versions above the installed one that fix it, ascending; empty when none is known.' },
            file: { type: 'string', description: 'The lockfile.' },
            direct: { type: 'boolean', description: 'The project depends on the package itself.' },
            dev: { type: 'boolean', description: 'Installed only for development.' },
            dependency_path: { type: 'array', items: { type: 'string' }, description: 'Shortest chain name@version from a direct dependency down to the package.' },
          },
        },
      },
      ...pageOutputs('Vulnerabilities'),
      summary: countsOutput(SEVERITIES, 'Vulnerabilities found per severity (all of them, not only those returned).'),
      packages_scanned: { type: 'integer', description: 'Distinct package versions checked.' },
      lockfiles: lockfilesOutput({ skipped: true }),
      skipped: {
        type: 'array',
        description: `Lockfile entries that name no installed version (unpinned requirements, pip options, local links); at most ${MAX_SKIPPED_LISTED}.`,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['file', 'entry', 'reason'],
          properties: { file: { type: 'string' }, entry: { type: 'string' }, reason: { type: 'string' } },
        },
      },
      source: { type: 'string', enum: ['osv-data-dir', 'osv-api'], description: 'Where the advisories came from.' },
      advisory_data: ADVISORY_DATA_OUTPUT,
      warnings: { type: 'array', items: { type: 'string' }, description: 'Gaps in the advisory data (an ecosystem without records, unreadable files).' },
    },
    required: ['vulnerabilities', 'count', 'total', 'truncated', 'summary', 'packages_scanned', 'lockfiles', 'skipped', 'source', 'advisory_data', 'warnings'],
  },
  examples: DEPENDENCY_CHECK_EXAMPLES,
});

@Tool(definition)
export class DependencyCheckTool implements ToolHandler<typeof definition> {
  execute(input: DependencyCheckInput, ctx: ToolContext<typeof definition>): Promise<DependencyCheckOutput> {
    return dependencyCheck(input, ctx);
  }
}
