/**
 * What a pull request's reviews and checks add up to, the way GitHub's merge box reads them.
 */

export interface ReviewLike {
  author: string;
  state: string;
}

export interface ReviewSummary {
  approved: string[];
  changes_requested: string[];
}

/**
 * Each reviewer's standing decision: their latest APPROVED or CHANGES_REQUESTED, cleared by a
 * DISMISSED review; COMMENTED reviews change nothing. `reviews` is in chronological order.
 */
export function summarizeReviews(reviews: readonly ReviewLike[]): ReviewSummary {
  const decisions = new Map<string, 'APPROVED' | 'CHANGES_REQUESTED'>();
  for (const { author, state } of reviews) {
    if (state === 'APPROVED' || state === 'CHANGES_REQUESTED') decisions.set(author, state);
    else if (state === 'DISMISSED') decisions.delete(author);
  }
  const who = (decision: string) => [...decisions].filter(([, state]) => state === decision).map(([author]) => author).sort();
  return { approved: who('APPROVED'), changes_requested: who('CHANGES_REQUESTED') };
}

export type ChecksState = 'success' | 'failure' | 'pending' | 'none';

/** Conclusions that block a merge; `neutral` and `skipped` do not. */
const FAILED_CONCLUSIONS = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure', 'stale']);
const FAILED_STATUSES = new Set(['failure', 'error']);

/** failure if any check run or status failed, else pending if any is unfinished, else success; none without any. */
export function checksState(runs: ReadonlyArray<{ status: string; conclusion: string | null }>, statuses: ReadonlyArray<{ state: string }>): ChecksState {
  if (runs.length === 0 && statuses.length === 0) return 'none';
  if (runs.some((r) => r.status === 'completed' && FAILED_CONCLUSIONS.has(r.conclusion ?? '')) || statuses.some((s) => FAILED_STATUSES.has(s.state))) return 'failure';
  if (runs.some((r) => r.status !== 'completed') || statuses.some((s) => s.state === 'pending')) return 'pending';
  return 'success';
}
