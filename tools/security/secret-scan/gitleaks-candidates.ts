/** gitleaks's matches as candidates of the scan: rule ids kept, prefixed `gitleaks/`. */
import type { Candidate, Severity } from './findings';
import type { GitleaksRules } from './gitleaks-engine';

/** gitleaks findings are `high` unless listed here. */
const SEVERITIES: Readonly<Record<string, Severity>> = {
  'private-key': 'critical',
  'generic-api-key': 'medium',
};

/** gitleaks's catch-all rule is a heuristic, as the scan's own entropy rule is. */
const HEURISTIC_RULES = new Set(['generic-api-key']);

export function gitleaksCandidates(text: string, file: string, rules: GitleaksRules, includeHeuristics: boolean): Candidate[] {
  return rules
    .scan(text, file)
    .filter(({ rule }) => includeHeuristics || !HEURISTIC_RULES.has(rule.id))
    .map(({ rule, start, end }) => ({
      rule: `gitleaks/${rule.id}`,
      severity: SEVERITIES[rule.id] ?? 'high',
      message: rule.description,
      start,
      end,
      tier: HEURISTIC_RULES.has(rule.id) ? 2 : 1,
    }));
}
