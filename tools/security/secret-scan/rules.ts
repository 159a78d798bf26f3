/** The scan's own rules: this service's API keys, and high-entropy values assigned to secret-looking names. */
import { shannonEntropy } from './entropy';
import type { Candidate } from './findings';

/**
 * High-entropy rule: a value of 16..256 non-blank characters, quoted, or alone on a `.env`,
 * INI, properties or YAML `NAME=value` / `name: value` line (a trailing `# comment` or
 * `; comment` allowed), assigned to a secret-looking name, mixing letters and digits, with a
 * Shannon entropy of at least 3.5 bits per character, and not a placeholder. Random
 * alphanumeric strings of that length score about 3.7-4.2; words, repeated characters and
 * placeholders score below. Other names (auth, creds, …) are gitleaks's generic-api-key rule's,
 * with its allow-lists.
 */
const ENTROPY_THRESHOLD = 3.5;
const SECRET_NAME = /passw(?:or)?d|passphrase|secret|token|(?:api|access|private|auth|app|master|encryption|signing)[_-]?key|credential/i;
const QUOTED_ASSIGNMENT = /(?<![\w.-])(["']?)([A-Za-z_][\w.-]{0,63})\1[ \t]*(?::=|=>|=|:)[ \t]*(["'`])([^\s"'`]{16,256})\3/dg;
const BARE_ASSIGNMENT = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][\w.-]{0,63})[ \t]*[=:][ \t]*([^\s"'`#;]{16,256})[ \t]*(?:[#;].*)?$/dgm;
/** Template variables, angle-bracket and "your-..." hints, and the usual stand-ins. */
export const PLACEHOLDER = /^\$\{.*\}$|^\$\(.*\)$|^<.*>$|^%.*%$|^\{\{.*\}\}$|change_?me|your[_-]|example|placeholder|dummy|redacted|x{4}|\*{3}/i;

/** This service's own API keys (docs/API.md#keys-and-scopes). */
const SERVICE_KEY = /(?<![A-Za-z0-9_])sk_(user|svc|temp)_[A-Za-z0-9]{32}(?![A-Za-z0-9])/g;

export function serviceKeyCandidates(text: string): Candidate[] {
  return [...text.matchAll(SERVICE_KEY)].map((match): Candidate => ({
    rule: 'tos/api-key',
    severity: 'critical',
    message: `Found a Tool Orchestration Service API key (${match[1]})`,
    start: match.index,
    end: match.index + match[0].length,
    tier: 0,
  }));
}

export function entropyCandidates(text: string): Candidate[] {
  const candidates: Candidate[] = [];
  const assignments = [
    ...[...text.matchAll(QUOTED_ASSIGNMENT)].map((match) => ({ name: match[2], value: match[4], start: match.indices![4][0] })),
    ...[...text.matchAll(BARE_ASSIGNMENT)].map((match) => ({ name: match[1], value: match[2], start: match.indices![2][0] })),
  ];
  for (const { name, value, start } of assignments) {
    if (!SECRET_NAME.test(name) || !/[A-Za-z]/.test(value) || !/\d/.test(value) || PLACEHOLDER.test(value)) continue;
    const entropy = shannonEntropy(value);
    if (entropy < ENTROPY_THRESHOLD) continue;
    candidates.push({
      rule: 'tos/high-entropy-assignment',
      severity: 'medium',
      message: `High-entropy value (${entropy.toFixed(2)} bits/char) assigned to ${name}`,
      start,
      end: start + value.length,
      tier: 2,
    });
  }
  return candidates;
}
