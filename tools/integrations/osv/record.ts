/** The part of an OSV record (https://ossf.github.io/osv-schema/) the scanners read. */

export interface OsvSeverity {
  type: string;
  score: string;
}

export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export interface OsvRange {
  type: 'SEMVER' | 'ECOSYSTEM' | 'GIT' | string;
  events: OsvEvent[];
}

export interface OsvAffected {
  package?: { ecosystem: string; name: string; purl?: string };
  severity?: OsvSeverity[];
  ranges?: OsvRange[];
  versions?: string[];
  database_specific?: Record<string, unknown>;
}

export interface OsvRecord {
  id: string;
  modified?: string;
  withdrawn?: string;
  aliases?: string[];
  summary?: string;
  details?: string;
  severity?: OsvSeverity[];
  affected?: OsvAffected[];
  database_specific?: Record<string, unknown>;
}

/** One installed package asked about: an OSV ecosystem, a name and a version. */
export interface PackageQuery {
  ecosystem: string;
  name: string;
  version: string;
}

/** Throws unless the value has the shape of an OSV record (id and, when present, an affected array). */
export function asOsvRecord(value: unknown, where: string): OsvRecord {
  const record = value as OsvRecord;
  if (!record || typeof record !== 'object' || typeof record.id !== 'string' || (record.affected !== undefined && !Array.isArray(record.affected))) {
    throw new Error(`${where} is not an OSV record (no string id or a non-array affected)`);
  }
  return record;
}
