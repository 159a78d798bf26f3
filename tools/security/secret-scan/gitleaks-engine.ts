/**
 * gitleaks's default rules run as gitleaks runs them: a rule is tried
 * only where one of its keywords occurs, the secret is its capture group, a secret at or under
 * the rule's entropy is dropped, and the global and per-rule allow-lists remove known false
 * positives. Patterns keep Go's RE2 syntax and run on re2js (linear time on any input).
 */
import type { RE2JS } from 're2js';
import { shannonEntropy } from './entropy';
import { GLOBAL_ALLOWLIST, GITLEAKS_RULES } from './gitleaks/rules.generated';
import type { GitleaksAllowlist, GitleaksRule } from './gitleaks/types';

/** A line carrying this marker is never reported (gitleaks's inline opt-out). */
const ALLOW_SIGNATURE = 'gitleaks:allow';

export interface GitleaksMatch {
  rule: GitleaksRule;
  /** The secret's range in the scanned text. */
  start: number;
  end: number;
}

type Compile = (pattern: string) => RE2JS;

class CompiledAllowlist {
  private readonly paths?: RE2JS[];
  private readonly regexes?: RE2JS[];
  private readonly stopwords?: string[];

  constructor(
    readonly source: GitleaksAllowlist,
    compile: Compile,
  ) {
    this.paths = source.paths?.map(compile);
    this.regexes = source.regexes?.map(compile);
    this.stopwords = source.stopwords?.map((word) => word.toLowerCase());
  }

  /** gitleaks skips a file for a rule when an OR allow-list lists its path. */
  skipsFile(file: string): boolean {
    return this.source.condition !== 'AND' && this.pathAllowed(file);
  }

  allows(secret: string, match: string, line: string, file: string): boolean {
    const target = this.source.regexTarget === 'match' ? match : this.source.regexTarget === 'line' ? line : secret;
    const regexAllowed = target !== '' && (this.regexes?.some((regex) => regex.test(target)) ?? false);
    const lower = secret.toLowerCase();
    const stopword = secret !== '' && (this.stopwords?.some((word) => lower.includes(word)) ?? false);
    if (this.source.condition !== 'AND') return regexAllowed || stopword;
    const checks = [
      ...(this.paths ? [this.pathAllowed(file)] : []),
      ...(this.regexes ? [regexAllowed] : []),
      ...(this.stopwords ? [stopword] : []),
    ];
    return checks.length > 0 && checks.every(Boolean);
  }

  private pathAllowed(file: string): boolean {
    return this.paths?.some((path) => path.test(file)) ?? false;
  }
}

class CompiledRule {
  private pattern?: RE2JS;
  private pathPattern?: RE2JS | null;
  private allowlists?: CompiledAllowlist[];

  constructor(
    readonly rule: GitleaksRule,
    private readonly compile: Compile,
  ) {}

  /** The rule applies to this file (its path pattern, its allow-listed paths). */
  appliesTo(file: string): boolean {
    this.pathPattern ??= this.rule.path === undefined ? null : this.compile(this.rule.path);
    if (this.pathPattern && !this.pathPattern.test(file)) return false;
    return !this.ruleAllowlists().some((allowlist) => allowlist.skipsFile(file));
  }

  hasKeywordIn(lowerText: string): boolean {
    return this.rule.keywords.length === 0 || this.rule.keywords.some((keyword) => lowerText.includes(keyword));
  }

  /** Matches in `text[from, to)` as ranges of `text`, with the secret and the whole match. */
  *matches(text: string, from: number, to: number): Generator<{ start: number; end: number; secret: string; match: string }> {
    this.pattern ??= this.compile(this.rule.regex);
    const segment = text.slice(from, to);
    const matcher = this.pattern.matcher(segment);
    let position = 0;
    while (position <= segment.length && matcher.find(position)) {
      const matchStart = matcher.start();
      const matchEnd = matcher.end();
      position = matchEnd > matchStart ? matchEnd : matchEnd + 1;
      const group = this.secretGroup(matcher);
      const start = group === 0 ? matchStart : matcher.start(group);
      const end = group === 0 ? matchEnd : matcher.end(group);
      if (start < 0) continue; // the rule's secret group took no part in this match
      yield { start: from + start, end: from + end, secret: segment.slice(start, end).replace(/^\n+|\n+$/g, ''), match: segment.slice(matchStart, matchEnd) };
    }
  }

  ruleAllowlists(): CompiledAllowlist[] {
    this.allowlists ??= (this.rule.allowlists ?? []).map((allowlist) => new CompiledAllowlist(allowlist, this.compile));
    return this.allowlists;
  }

  /** secretGroup when set, else the first capture group that matched something, else the match. */
  private secretGroup(matcher: ReturnType<RE2JS['matcher']>): number {
    if (this.rule.secretGroup) return this.rule.secretGroup;
    for (let group = 1; group <= matcher.groupCount(); group++) {
      const value = matcher.group(group);
      if (value !== null && value !== '') return group;
    }
    return 0;
  }
}

export class GitleaksRules {
  private readonly rules: CompiledRule[];
  private readonly global: CompiledAllowlist;

  constructor(compile: Compile) {
    const cache = new Map<string, RE2JS>();
    const cached: Compile = (pattern) => {
      let compiled = cache.get(pattern);
      if (!compiled) cache.set(pattern, (compiled = compile(pattern)));
      return compiled;
    };
    this.rules = GITLEAKS_RULES.map((rule) => new CompiledRule(rule, cached));
    this.global = new CompiledAllowlist(GLOBAL_ALLOWLIST, cached);
  }

  get count(): number {
    return this.rules.length;
  }

  scan(text: string, file: string): GitleaksMatch[] {
    if (this.global.skipsFile(file)) return [];
    const lowerText = text.toLowerCase();
    const present = this.rules.filter((rule) => rule.hasKeywordIn(lowerText) && rule.appliesTo(file));
    const found: GitleaksMatch[] = [];
    const lines = lineRanges(text);
    const lineAt = (offset: number) => lines.find(([start, end]) => offset >= start && offset <= end) ?? [0, text.length];
    const report = (rule: CompiledRule, hit: { start: number; end: number; secret: string; match: string }, line: string) => {
      if (line.includes(ALLOW_SIGNATURE)) return;
      if (rule.rule.entropy !== undefined && shannonEntropy(hit.secret) <= rule.rule.entropy) return;
      const allowed = [this.global, ...rule.ruleAllowlists()].some((allowlist) => allowlist.allows(hit.secret, hit.match, line, file));
      if (!allowed) found.push({ rule: rule.rule, start: hit.start, end: hit.end });
    };

    for (const rule of present.filter((candidate) => candidate.rule.multiline)) {
      for (const hit of rule.matches(text, 0, text.length)) {
        const [lineStart, lineEnd] = lineAt(hit.start);
        report(rule, hit, text.slice(lineStart, lineEnd));
      }
    }
    const perLine = present.filter((candidate) => !candidate.rule.multiline);
    for (const [start, end] of lines) {
      const line = text.slice(start, end);
      const lowerLine = line.toLowerCase();
      for (const rule of perLine) {
        if (!rule.hasKeywordIn(lowerLine)) continue;
        for (const hit of rule.matches(text, start, end)) report(rule, hit, line);
      }
    }
    return found;
  }
}

/** [start, end) of every line, without its line break. */
function lineRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    ranges.push([start, index > start && text[index - 1] === '\r' ? index - 1 : index]);
    start = index + 1;
  }
  ranges.push([start, text.length]);
  return ranges;
}

let loaded: Promise<GitleaksRules> | undefined;

/** Loads re2js on first use (the catalogue never needs it); patterns compile when first tried. */
export function loadGitleaksRules(): Promise<GitleaksRules> {
  loaded ??= import('re2js').then(({ RE2JS }) => new GitleaksRules((pattern) => RE2JS.compile(pattern)));
  return loaded;
}
