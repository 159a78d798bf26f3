/** The taint engine's rules: one per sink class, each with the CWE it finds and the severity sast-scan reports. */
/** sast-scan's severities (rules.ts), spelled here: a subfolder imports nothing from its parent. */
type SastSeverity = 'critical' | 'high' | 'medium' | 'low';

export interface TaintRule {
  severity: SastSeverity;
  cwe: number;
  description: string;
}

const rule = (severity: SastSeverity, cwe: number, description: string): TaintRule => ({ severity, cwe, description });

export const TAINT_RULES = {
  'taint/code-injection': rule('critical', 94, 'Request data or command-line arguments reach code evaluation (eval, Function, vm, string timers, mathjs evaluate).'),
  'taint/command-injection': rule('critical', 78, 'Request data or command-line arguments reach a shell command (child_process exec, or spawn/execFile with a shell).'),
  'taint/sql-injection': rule('critical', 89, 'Request data or command-line arguments are built into the text of an SQL query (pg, mysql, mysql2, sequelize.query, knex.raw, Prisma unsafe queries).'),
  'taint/nosql-injection': rule('high', 943, 'Request data reaches a MongoDB $where clause, or a request object (body or query) is used as a query filter, letting the caller inject operators.'),
  'taint/path-traversal': rule('high', 22, 'Request data or command-line arguments name a file for fs, res.sendFile or res.download without basename or a containment check.'),
  'taint/ssrf': rule('high', 918, 'Request data decides the URL of an outgoing request (http(s).request/get, fetch, axios, got, needle, request, superagent).'),
  'taint/open-redirect': rule('medium', 601, 'Request data decides where a redirect sends the browser.'),
  'taint/xss': rule('high', 79, 'Request data is written into an HTML response (res.send, res.write, res.end, Koa ctx.body) or into innerHTML/outerHTML/document.write without escaping.'),
  'taint/xxe': rule('high', 611, 'Request data is parsed as XML with external entities expanded (libxmljs with noent: true).'),
  'taint/insecure-deserialization': rule('critical', 502, 'Request data is deserialized by a library that can run code (node-serialize, serialize-to-js, js-yaml unsafe loading).'),
  'taint/prototype-pollution': rule('high', 1321, 'A request object is deep-merged or set by path (lodash merge/defaultsDeep/set, deepmerge, deep-extend, merge-deep, mixin-deep).'),
  'taint/log-injection': rule('low', 117, 'Request data is written to a log (console, logger) without removing line breaks.'),
  'taint/redos': rule('medium', 1333, 'Request data is compiled as a regular expression (new RegExp) without escaping.'),
} as const satisfies Record<string, TaintRule>;

export type TaintRuleId = keyof typeof TAINT_RULES;
/** The sink class a rule id names: 'taint/xss' → 'xss'. Sanitizers are per class. */
export type SinkClass = TaintRuleId extends `taint/${infer Class}` ? Class : never;
