/**
 * What the vulnerability scanners (dependency-check, image-scan) share around the matcher: where
 * the advisories come from, how a finding is described, and the order findings are listed in.
 */
import { compareText, ToolError, type ToolContext, type ToolInputProperty, type ToolSettingDefinition } from '@tos/sdk';
import type { AdvisorySource } from './advisories';
import { OsvApiClient } from './api-client';
import type { OsvAffected, OsvRecord } from './record';
import { rateSeverity, severityRank, type RatedSeverity } from './severity';
import { readSyncState } from './sync-state';

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
  return { kind: 'api', client: new OsvApiClient(ctx.http, url), url };
}

const UNKNOWN = 'unknown';

/** Which advisory data a result used and how fresh it was (docs/tools.md "Offline advisory data"). */
export const ADVISORY_DATA_OUTPUT = {
  type: 'object',
  description:
    'Which advisory data the scan used: OSV_DATA_DIR (offline, with each ecosystem\'s sync date and newest record date from `tos advisories sync`, "unknown" for a folder filled by hand) or the OSV API (its URL and when it was asked).',
  additionalProperties: false,
  required: ['source', 'directory', 'api_url', 'queried_at', 'ecosystems'],
  properties: {
    source: { type: 'string', enum: ['offline', 'osv-api'] },
    directory: { type: ['string', 'null'], description: 'OSV_DATA_DIR when offline.' },
    api_url: { type: ['string', 'null'], description: 'OSV_API_URL when online.' },
    queried_at: { type: ['string', 'null'], description: 'When the OSV API was asked (ISO 8601), when online.' },
    ecosystems: {
      type: 'array',
      description: 'Offline: each ecosystem matched (the folder it was read from, so Debian for Debian:12).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['ecosystem', 'synced_at', 'data_as_of'],
        properties: {
          ecosystem: { type: 'string' },
          synced_at: { type: 'string', description: 'When `tos advisories sync` last confirmed the folder current, or "unknown".' },
          data_as_of: { type: 'string', description: "The newest record's `modified` date, or \"unknown\"." },
        },
      },
    },
  },
} as const;

export interface AdvisoryData {
  source: 'offline' | 'osv-api';
  directory: string | null;
  api_url: string | null;
  queried_at: string | null;
  ecosystems: Array<{ ecosystem: string; synced_at: string; data_as_of: string }>;
}

/** The `advisory_data` of a result: `ecosystems` are those queried, `queriedAt` when the lookup began. */
export async function describeAdvisoryData(source: AdvisorySource, ecosystems: string[], queriedAt: Date): Promise<AdvisoryData> {
  if (source.kind === 'api') return { source: 'osv-api', directory: null, api_url: source.url, queried_at: queriedAt.toISOString(), ecosystems: [] };
  const synced = (await readSyncState(source.directory)).ecosystems;
  const folders = [...new Set(ecosystems.map((ecosystem) => ecosystem.split(':')[0]))].sort(compareText);
  return {
    source: 'offline',
    directory: source.directory,
    api_url: null,
    queried_at: null,
    ecosystems: folders.map((ecosystem) => ({ ecosystem, synced_at: synced[ecosystem]?.synced_at ?? UNKNOWN, data_as_of: synced[ecosystem]?.newest_record ?? UNKNOWN })),
  };
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
