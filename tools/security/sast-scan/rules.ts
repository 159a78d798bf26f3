import { TAINT_RULES } from './taint/rules';

/**
 * The rules sast-scan runs: ESLint core's eval family, eslint-plugin-security, Microsoft's SDL
 * plugin and Mozilla's no-unsanitized, each with the severity we report it at and the sets it is in.
 * `recommended` leaves out the rules known for many false positives (object injection on every
 * `obj[key]`, any http:// string, any cookie access, framework-specific ones).
 */
export const SAST_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type SastSeverity = (typeof SAST_SEVERITIES)[number];

export const RULE_SETS = ['recommended', 'strict'] as const;
export type RuleSet = (typeof RULE_SETS)[number];

interface RuleEntry {
  severity: SastSeverity;
  /** In `recommended` too; every rule is in `strict`. */
  recommended: boolean;
  /** CWE the rule looks for, for SARIF's taxonomy-less `tags`. */
  cwe: number;
  /** For rules of our own (the taint engine's); ESLint's rules describe themselves. */
  description?: string;
}

const rule = (severity: SastSeverity, recommended: boolean, cwe: number): RuleEntry => ({ severity, recommended, cwe });

export const SAST_RULES: Readonly<Record<string, RuleEntry>> = {
  'no-eval': rule('high', true, 95),
  'no-implied-eval': rule('high', true, 95),
  'no-new-func': rule('high', true, 95),
  'security/detect-eval-with-expression': rule('critical', true, 95),
  'security/detect-child-process': rule('high', true, 78),
  'security/detect-non-literal-require': rule('high', true, 829),
  'security/detect-non-literal-fs-filename': rule('medium', true, 22),
  'security/detect-unsafe-regex': rule('medium', true, 1333),
  'security/detect-non-literal-regexp': rule('medium', true, 1333),
  'security/detect-disable-mustache-escape': rule('high', true, 79),
  'security/detect-no-csrf-before-method-override': rule('medium', true, 352),
  'security/detect-possible-timing-attacks': rule('low', true, 208),
  'security/detect-pseudoRandomBytes': rule('medium', true, 338),
  'security/detect-buffer-noassert': rule('medium', true, 119),
  'security/detect-new-buffer': rule('medium', true, 119),
  'security/detect-bidi-characters': rule('high', true, 1007),
  'security/detect-object-injection': rule('low', false, 915),
  'no-unsanitized/method': rule('high', true, 79),
  'no-unsanitized/property': rule('high', true, 79),
  '@microsoft/sdl/no-inner-html': rule('high', true, 79),
  '@microsoft/sdl/no-html-method': rule('high', true, 79),
  '@microsoft/sdl/no-document-write': rule('high', true, 79),
  '@microsoft/sdl/no-document-domain': rule('medium', true, 346),
  '@microsoft/sdl/no-insecure-random': rule('medium', true, 338),
  '@microsoft/sdl/no-postmessage-star-origin': rule('medium', true, 345),
  '@microsoft/sdl/no-unsafe-alloc': rule('medium', true, 908),
  '@microsoft/sdl/no-electron-node-integration': rule('high', true, 94),
  '@microsoft/sdl/no-msapp-exec-unsafe': rule('medium', true, 94),
  '@microsoft/sdl/no-insecure-url': rule('low', false, 319),
  '@microsoft/sdl/no-cookies': rule('low', false, 1004),
  '@microsoft/sdl/no-angular-bypass-sanitizer': rule('high', false, 79),
  '@microsoft/sdl/no-angular-sanitization-trusted-urls': rule('medium', false, 79),
  '@microsoft/sdl/no-angularjs-bypass-sce': rule('high', false, 79),
  '@microsoft/sdl/no-angularjs-enable-svg': rule('medium', false, 79),
  '@microsoft/sdl/no-angularjs-sanitization-whitelist': rule('medium', false, 79),
  '@microsoft/sdl/no-winjs-html-unsafe': rule('medium', false, 79),
  ...Object.fromEntries(Object.entries(TAINT_RULES).map(([id, entry]) => [id, { ...entry, recommended: true }])),
};

export const SAST_RULE_IDS = Object.keys(SAST_RULES);

/** The rule ids a `rules` input names: a set, or a comma-separated list of ids (undefined entries are unknown ids). */
export function selectRules(rules: string): { ids: string[]; unknown: string[] } {
  const trimmed = rules.trim();
  if (trimmed === 'strict') return { ids: SAST_RULE_IDS, unknown: [] };
  if (trimmed === 'recommended') return { ids: SAST_RULE_IDS.filter((id) => SAST_RULES[id].recommended), unknown: [] };
  const named = [...new Set(trimmed.split(',').map((id) => id.trim()).filter((id) => id !== ''))];
  return { ids: named.filter((id) => id in SAST_RULES), unknown: named.filter((id) => !(id in SAST_RULES)) };
}
