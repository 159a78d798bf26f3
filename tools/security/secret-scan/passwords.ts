/**
 * Opt-in rules (`include_passwords`) for credentials that carry no entropy or provider format:
 * literal values of any strength assigned to password-like names in the shapes config files
 * use, and password hashes (crypt/bcrypt, as in /etc/shadow, .htpasswd or a SQL dump). They find
 * what leaky-repo plants (bench/README.md, "Secret recall") at the cost of test fixtures'
 * passwords: hence off by default.
 */
import type { Candidate } from './findings';
import { PLACEHOLDER } from './rules';

/** pass, passwd, password, passphrase, pwd, secret, salt; or an upper-case NAME_KEY constant (AUTH_KEY, APP_KEY). */
const PASSWORD_NAME = /pass(?:w(?:or)?d|phrase)?(?![a-z])|pwd|secret|salt/i;
const KEY_CONSTANT = /^[A-Z0-9_]*_KEY$/;
const NOT_A_PASSWORD_NAME = /bypass|passive|compass|passthrough|passenger|public|prompt|save[_-]?pass|path|file|field|length|policy|type|mode|hint/i;
/**
 * `name = value`, `name: value`, `"name": "value"`, `name="value"` (XML attributes); PHP's
 * `define('NAME', 'value')`; `password value` opening a line or after `login user` (.netrc, esmtprc).
 */
const ASSIGNMENTS: readonly RegExp[] = [
  /(?<![\w.-])(["']?)([A-Za-z_$][\w.-]{0,63})\1[ \t]*(?::=|=>|=|:)[ \t]*(["'])((?:(?!\3)[^\n]){4,256})\3/dg,
  /define\([ \t]*(["'])([A-Za-z_][\w]{0,63})\1[ \t]*,[ \t]*(["'])((?:(?!\3)[^\n]){4,256})\3/dg,
  /^[ \t]*(?:export[ \t]+)?()([A-Za-z_][\w.-]{0,63})[ \t]*[=:][ \t]*()([^\s"'`#;]{4,256})[ \t]*(?:[#;].*)?$/dgm,
  /(?:^[ \t]*|\blogin[ \t]+\S+[ \t]+)()(password|passwd)[ \t]+(["']?)([^\s"']{4,256})\3/dgm,
];
/** `<Pass>value</Pass>`, `<password>value</password>`. */
const XML_ELEMENT = /<(pass(?:word|wd)?)(?:\s[^>]*)?>([^<\n]{4,256})<\/\1>/dgi;
/** crypt(3) and bcrypt hashes: $1$ MD5, $5$/$6$ SHA, $2a$/$2b$/$2y$ bcrypt, $apr1$ Apache, $y$ yescrypt. */
const PASSWORD_HASH = /(?<![\w$])\$(?:1|5|6|2[abxy]|apr1|y)\$[./A-Za-z0-9$]{16,}/g;
/** Values that are code, not literals: booleans, numbers, variables, calls. */
const NOT_A_VALUE = /^(?:true|false|null|none|nil|undefined|yes|no|on|off|\d+)$|^\$|\(|^\*+$/i;

export function passwordCandidates(text: string): Candidate[] {
  const candidates: Candidate[] = [];
  const add = (name: string, value: string, start: number) => {
    if (!(PASSWORD_NAME.test(name) || KEY_CONSTANT.test(name)) || NOT_A_PASSWORD_NAME.test(name) || NOT_A_VALUE.test(value.trim()) || PLACEHOLDER.test(value)) return;
    candidates.push({ rule: 'tos/password-assignment', severity: 'low', message: `Literal value assigned to ${name}`, start, end: start + value.length, tier: 2 });
  };
  for (const pattern of ASSIGNMENTS) {
    for (const match of text.matchAll(pattern)) add(match[2], match[4], match.indices![4][0]);
  }
  for (const match of text.matchAll(XML_ELEMENT)) add(match[1], match[2], match.indices![2][0]);
  for (const match of text.matchAll(PASSWORD_HASH)) {
    candidates.push({ rule: 'tos/password-hash', severity: 'medium', message: 'Password hash (crypt or bcrypt)', start: match.index, end: match.index + match[0].length, tier: 1 });
  }
  return candidates;
}
