/** The shape of gitleaks's configuration as convert.py writes it (fields keep gitleaks's names). */
export interface GitleaksAllowlist {
  /** OR (default): any regex or stopword allows; AND: every check given must hold. */
  condition?: 'AND';
  /** What `regexes` test: the secret (default), the whole match, or the line. */
  regexTarget?: 'match' | 'line';
  paths?: string[];
  regexes?: string[];
  stopwords?: string[];
}

export interface GitleaksRule {
  id: string;
  description: string;
  /** Go RE2 syntax, run with re2js. */
  regex: string;
  /** Which capture group holds the secret; 0 or absent: the first non-empty group, else the match. */
  secretGroup?: number;
  /** A secret of this Shannon entropy (bits/char) or less is not reported. */
  entropy?: number;
  /** The rule only applies to files whose path matches. */
  path?: string;
  /** Lower-cased; a line is only matched against a rule whose keyword it contains (none: every line). */
  keywords: string[];
  /** The pattern spans lines: run on the whole text. */
  multiline?: true;
  allowlists?: GitleaksAllowlist[];
}
