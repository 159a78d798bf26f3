/**
 * What the vulnerability scanners (dependency-check, image-scan) share around the matcher: where
 * the advisories come from, how a finding is described, and the order findings are listed in.
 */
import { compareText, ToolError, type ToolContext, type ToolInputProperty, type ToolSettingDefinition } from '@tos/sdk';
import type { AdvisorySource } from './advisories';
import { OsvApiClient } from './api-client';
import type { OsvAffected, OsvRecord } from './record';
import { rateSeverity, severityRank, type RatedSeverity } from './severity';

const MAX_SUMMARY_CHARS = 300;

export const MIN_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

/** The settings that choose the advisory source. */
export const OSV_SETTINGS: Record<'OSV_DATA_DIR' | 'OSV_API_URL', ToolSettingDefinition> = {
  OSV_DATA_DIR: {
    type: 'string',
    description: "A directory of OSV records in OSV's bulk-export layout (<dir>/npm/*.json, <dir>/PyPI/*.json, <dir>/Debian/*.json, …): offline matching; wins over OSV_API_URL when set.",
  },
  OSV_API_URL: {
    type: 'url',
    default: 'https://api.osv.dev/v1',
    description: 'Versioned root of the OSV API (querybatch and vulns), used when OSV_DATA_DIR is not set.',
  },
};

/** The inputs that filter and bound the findings listed. */
export const SEVERITY_FILTER_INPUTS = {
  min_severity: {
    type: 'string',
    enum: [...MIN_SEVERITIES],
    default: 'low',
    description: 'Report advisories of at least this severity; advisories of unknown severity are always reported.',
  },
  max_results: { type: 'integer', minimum: 1, maximum: 1000, default: 200, description: 'Most vulnerabilities returned, worst first.' },
} as const satisfies Record<string, ToolInputProperty>;

/** OSV_DATA_DIR when the operator set one (offline), else the OSV API. */
export function advisorySource(ctx: ToolContext): AdvisorySource {
  const directory = ctx.config.OSV_DATA_DIR;
  if (typeof directory === 'string' && directory !== '') return { kind: 'directory', directory };
  const url = ctx.config.OSV_API_URL;
  if (typeof url !== 'string' || url === '') throw new ToolError('Neither OSV_DATA_DIR nor OSV_API_URL is set', { suggestion: 'Set one of them on the service' });
  return { kind: 'api', client: new OsvApiClient(ctx.http, url) };
}

/** A finding's advisory part: id, aliases, a one-line summary and the rated severity. */
export function describeAdvisory(record: OsvRecord, affected: OsvAffected[]): { id: string; aliases: string[]; summary: string } & RatedSeverity {
  return {
    id: record.id,
    aliases: [...(record.aliases ?? [])].sort(),
    summary: (record.summary ?? firstLine(record.details) ?? '').slice(0, MAX_SUMMARY_CHARS),
    ...rateSeverity(record, affected),
  };
}

interface Listed extends RatedSeverity {
  id: string;
  package: string;
  installed_version: string;
}

/** Most severe first, then by package, version and advisory; `where` breaks the last ties (file, layer). */
export function bySeverityThenName<T extends Listed>(where: (finding: T) => string): (a: T, b: T) => number {
  return (a, b) =>
    severityRank(a.severity) - severityRank(b.severity) ||
    (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
    compareText(a.package, b.package) ||
    compareText(a.installed_version, b.installed_version) ||
    compareText(a.id, b.id) ||
    compareText(where(a), where(b));
}

function firstLine(text: string | undefined): string | undefined {
  return text?.split('\n').find((line) => line.trim() !== '')?.trim();
}
