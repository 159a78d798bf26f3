/** Findings of the secret scan: the rules' candidates merged (one per overlapping run), located and redacted. */
import type { GitleaksRules } from './gitleaks-engine';
import { gitleaksCandidates } from './gitleaks-candidates';
import { secretlintCandidates, type Secretlint } from './secretlint';
import { passwordCandidates } from './passwords';
import { entropyCandidates, serviceKeyCandidates } from './rules';

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface Finding {
  rule: string;
  severity: Severity;
  file: string;
  line: number;
  column: number;
  message: string;
  match: string;
  /** History scans: the commit that introduced the secret. */
  commit?: string;
}

/** The loaded rule engines a scan runs. */
export interface Engines {
  secretlint: Secretlint;
  gitleaks: GitleaksRules;
}

/** A finding before it is located and redacted: a range of the scanned text. */
export interface Candidate {
  rule: string;
  severity: Severity;
  message: string;
  start: number;
  end: number;
  /**
   * Which wins where ranges overlap, lowest first: 0 secretlint's and the service-key rules (as
   * before gitleaks's joined), 1 gitleaks's provider rules, 2 the entropy heuristics.
   */
  tier: 0 | 1 | 2;
}

/** Which heuristic rules a scan adds to the provider rules. */
export interface Heuristics {
  entropy: boolean;
  passwords: boolean;
}

export async function scanText(text: string, file: string, heuristics: Heuristics, engines: Engines): Promise<Finding[]> {
  const candidates = [
    ...(await secretlintCandidates(text, file, engines.secretlint)),
    ...serviceKeyCandidates(text),
    ...(heuristics.entropy ? entropyCandidates(text) : []),
    // Last: on an equal range and tier the scan's own rule keeps its id.
    ...gitleaksCandidates(text, file, engines.gitleaks, heuristics.entropy),
    ...(heuristics.passwords ? passwordCandidates(text) : []),
  ];
  const locate = locator(text);
  return withoutOverlaps(candidates).map((candidate) => ({
    rule: candidate.rule,
    severity: candidate.severity,
    file,
    ...locate(candidate.start),
    message: candidate.message,
    match: redact(text.slice(candidate.start, candidate.end)),
  }));
}


const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 0, high: 1, medium: 2, low: 3 };

/**
 * One finding per run of overlapping ranges (e.g. secretlint and the entropy rule on the same
 * value): the lower tier wins, then the higher severity, then the earlier.
 */
function withoutOverlaps(candidates: Candidate[]): Candidate[] {
  const byStart = [...candidates].sort((a, b) => a.start - b.start || a.end - b.end);
  const kept: Candidate[] = [];
  let clusterEnd = -1;
  for (const candidate of byStart) {
    const current = kept[kept.length - 1];
    if (current !== undefined && candidate.start < clusterEnd) {
      if (better(candidate, current)) kept[kept.length - 1] = candidate;
      clusterEnd = Math.max(clusterEnd, candidate.end);
    } else {
      kept.push(candidate);
      clusterEnd = candidate.end;
    }
  }
  return kept;
}

function better(a: Candidate, b: Candidate): boolean {
  if (a.tier !== b.tier) return a.tier < b.tier;
  return SEVERITY_RANK[a.severity] < SEVERITY_RANK[b.severity];
}

/** 1-based line and column of an offset. */
function locator(text: string): (offset: number) => { line: number; column: number } {
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle] <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low] + 1 };
  };
}

/** Never the secret: its first 4 characters (none for short values) and its length. */
function redact(value: string): string {
  return `${value.length >= 12 ? value.slice(0, 4) : ''}**** (${value.length} chars)`;
}
