/**
 * A record's severity: the CVSS base score computed from its newest vector (v4, else v3.x, else
 * v2) with FIRST's qualitative rating, else the database's own label (GitHub's
 * `database_specific.severity`), else `unknown`.
 */
import { fromVector } from 'ae-cvss-calculator';
import type { OsvAffected, OsvRecord, OsvSeverity } from './record';

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'unknown'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface RatedSeverity {
  severity: Severity;
  /** CVSS base score, 0.0–10.0, when a vector was given. */
  cvss_score: number | null;
  cvss_vector: string | null;
}

const VECTOR_PREFERENCE = ['CVSS_V4', 'CVSS_V3', 'CVSS_V2'];
const DATABASE_LABELS: Readonly<Record<string, Severity>> = { critical: 'critical', high: 'high', moderate: 'medium', medium: 'medium', low: 'low' };

export function rateSeverity(record: OsvRecord, affected: OsvAffected[] = []): RatedSeverity {
  const vectors: OsvSeverity[] = [...(record.severity ?? []), ...affected.flatMap((entry) => entry.severity ?? [])];
  for (const type of VECTOR_PREFERENCE) {
    for (const vector of vectors.filter((candidate) => candidate.type === type)) {
      const score = baseScore(vector.score);
      if (score !== undefined) return { severity: ratingOf(score, type), cvss_score: score, cvss_vector: vector.score };
    }
  }
  const label = [record.database_specific?.severity, ...affected.map((entry) => entry.database_specific?.severity)].find((value) => typeof value === 'string');
  return { severity: DATABASE_LABELS[String(label).toLowerCase()] ?? 'unknown', cvss_score: null, cvss_vector: null };
}

function baseScore(vector: string): number | undefined {
  try {
    const parsed = fromVector(vector);
    const score = parsed?.calculateScores().base;
    return typeof score === 'number' && Number.isFinite(score) ? score : undefined;
  } catch {
    return undefined;
  }
}

/** FIRST's ratings: v3/v4 None 0, Low <4, Medium <7, High <9, Critical; v2 has no Critical. */
function ratingOf(score: number, type: string): Severity {
  if (score >= 9 && type !== 'CVSS_V2') return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  return 'low';
}

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}
