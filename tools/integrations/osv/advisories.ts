/**
 * Which OSV records affect which installed packages, from either source: a local OSV directory
 * (records indexed by name, then matched here) or the OSV API (matched by OSV; the records'
 * ranges still give the fix versions). Shared by the lockfile and image scanners.
 */
import type { OsvApiClient } from './api-client';
import { ecosystemIndex } from './local-database';
import { fixesFor, matchRecord, type Match } from './matcher';
import type { OsvRecord, PackageQuery } from './record';
import type { VersionOrdering } from './version-ordering';

export type AdvisorySource = { kind: 'directory'; directory: string } | { kind: 'api'; client: OsvApiClient; url: string };

export interface EcosystemRules {
  ordering: VersionOrdering;
  normaliseName?: (name: string) => string;
}

export interface AdvisoryFinding {
  /** Index of the query in the list asked about. */
  query: number;
  record: OsvRecord;
  match: Match;
}

export interface AdvisoryLookup {
  findings: AdvisoryFinding[];
  /** What the caller should know about the data (an ecosystem without records, unreadable files). */
  warnings: string[];
}

export interface LookupOptions {
  /** Rules per ecosystem (the query's ecosystem up to any `:` suffix). */
  ecosystems: Readonly<Record<string, EcosystemRules>>;
  signal: AbortSignal;
  /** Called with the share (0..1) of the lookup done. */
  onProgress?: (share: number) => void;
}

export async function findAdvisories(queries: PackageQuery[], source: AdvisorySource, options: LookupOptions): Promise<AdvisoryLookup> {
  return source.kind === 'directory' ? fromDirectory(queries, source.directory, options) : fromApi(queries, source.client, options);
}

function rulesFor(ecosystem: string, options: LookupOptions): EcosystemRules {
  const rules = options.ecosystems[ecosystem.split(':')[0]];
  if (!rules) throw new Error(`No version ordering for ecosystem ${ecosystem}`);
  return rules;
}

async function fromDirectory(queries: PackageQuery[], directory: string, options: LookupOptions): Promise<AdvisoryLookup> {
  const findings: AdvisoryFinding[] = [];
  const warnings: string[] = [];
  const ecosystems = [...new Set(queries.map((query) => query.ecosystem))].sort();
  for (const [done, ecosystem] of ecosystems.entries()) {
    const rules = rulesFor(ecosystem, options);
    const normalise = rules.normaliseName ?? ((name: string) => name);
    const index = await ecosystemIndex(directory, ecosystem, normalise, options.signal);
    if (!index.present) warnings.push(`No OSV records for ${ecosystem}: OSV_DATA_DIR has no ${ecosystem.split(':')[0]}/ folder`);
    if (index.unreadable > 0) warnings.push(`${index.unreadable} file(s) under OSV_DATA_DIR/${ecosystem.split(':')[0]} are not OSV records and were skipped`);
    for (const [position, query] of queries.entries()) {
      if (query.ecosystem !== ecosystem) continue;
      for (const record of index.byName.get(normalise(query.name)) ?? []) {
        const match = matchRecord(record, query, rules);
        if (match) findings.push({ query: position, record, match });
      }
    }
    options.onProgress?.((done + 1) / ecosystems.length);
  }
  return { findings, warnings };
}

async function fromApi(queries: PackageQuery[], client: OsvApiClient, options: LookupOptions): Promise<AdvisoryLookup> {
  const ids = await client.vulnerabilityIds(queries, (done) => options.onProgress?.((done / Math.max(queries.length, 1)) * 0.5));
  options.signal.throwIfAborted();
  const records = await client.records([...new Set(ids.flat())].sort());
  options.onProgress?.(1);
  const findings: AdvisoryFinding[] = [];
  for (const [position, query] of queries.entries()) {
    for (const id of ids[position]) {
      const record = records.get(id)!;
      // OSV decided the version is affected; a withdrawn record it still serves is not reported.
      if (record.withdrawn) continue;
      findings.push({ query: position, record, match: fixesFor(record, query, rulesFor(query.ecosystem, options)) });
    }
  }
  return { findings, warnings: [] };
}
