/**
 * What the taint engine treats as a source, a sanitizer or a pass-through: names of request
 * members, library functions and methods. The sinks are in sinks.ts.
 */
import type { SinkClass } from './rules';

/** Request members that carry the caller's data (Express, Koa's ctx.request, Fastify, Next, Node's IncomingMessage). */
export const REQUEST_INPUTS = new Set(['params', 'query', 'body', 'headers', 'cookies', 'signedCookies', 'files', 'file', 'url', 'originalUrl', 'path', 'hostname', 'host', 'querystring', 'search', 'href', 'nextUrl', 'searchParams', 'rawBody']);
/** Koa's ctx: these members come from the request (ctx.body is the response). */
export const KOA_INPUTS = new Set(['params', 'query', 'headers', 'header', 'cookies', 'url', 'originalUrl', 'path', 'querystring', 'search', 'href', 'host', 'hostname']);
/** Members that can hold an object the caller shaped (`?a[$ne]=`, JSON bodies), not only strings. */
export const OBJECT_INPUTS = new Set(['query', 'body', 'cookies', 'signedCookies', 'files', 'file']);
/** Request methods that return the caller's data: req.param('x'), req.get('Header'), await request.json(). */
export const REQUEST_READERS = new Set(['param', 'get', 'header', 'json', 'text', 'formData', 'arrayBuffer']);
/** Response methods that return the response (res.status(400).send(…)). */
export const RESPONSE_CHAINS = new Set(['status', 'type', 'set', 'header', 'cookie', 'clearCookie', 'vary', 'append', 'code', 'headers']);
/** Parameter names taken for a handler's request object, and for its response. */
export const REQUEST_NAMES = new Set(['req', 'request']);
export const RESPONSE_NAMES = new Set(['res', 'response', 'reply']);
/** Nest parameter decorators: what each one hands the handler. */
export const NEST_DECORATORS: Readonly<Record<string, string>> = { Body: 'body', Query: 'query', Param: 'params', Headers: 'headers', Req: 'request', Request: 'request' };
/** Browser globals an attacker controls through a link. */
export const BROWSER_SOURCES: Readonly<Record<string, ReadonlySet<string>>> = {
  location: new Set(['hash', 'search', 'href', 'pathname']),
  document: new Set(['URL', 'documentURI', 'referrer']),
};

/** Global functions whose result carries no string an attacker shaped. */
export const NUMERIC = new Set(['parseInt', 'parseFloat', 'Number', 'Boolean', 'isNaN', 'isFinite', 'BigInt']);

/** Calls that return their argument's data made safe for some sink classes: `module.function` or a global name. */
export const SANITIZERS: ReadonlyArray<{ match: RegExp; classes: readonly SinkClass[] }> = [
  { match: /^path\.basename$/, classes: ['path-traversal'] },
  { match: /^(?:escape-html|html-escaper\.escape|he\.(?:encode|escape)|lodash\.escape|validator\.escape|xss|dompurify\.sanitize|sanitize-html|entities\.encode\w*)$/, classes: ['xss', 'log-injection'] },
  { match: /^(?:encodeURIComponent|querystring\.escape)$/, classes: ['xss', 'log-injection', 'open-redirect', 'path-traversal', 'command-injection'] },
  { match: /^(?:sqlstring\.escape\w*|mysql2?\.escape\w*|pg-format|pg\.escape\w*)$/, classes: ['sql-injection'] },
  { match: /^(?:shell-quote\.quote|shell-escape|shescape\.quote\w*)$/, classes: ['command-injection'] },
  { match: /^(?:escape-string-regexp|lodash\.escapeRegExp)$/, classes: ['redos'] },
];
/** Methods that escape whatever object they are called on: ESAPI's encoder().encodeForHTML(x), connection.escape(x). */
export const SANITIZING_METHODS: ReadonlyArray<{ match: RegExp; classes: readonly SinkClass[] }> = [
  { match: /^encodeFor(?:HTML|HTMLAttribute|JavaScript|CSS|URL)$/, classes: ['xss', 'log-injection'] },
  { match: /^(?:escape|escapeId|escapeLiteral|escapeIdentifier)$/, classes: ['sql-injection', 'xss'] },
  { match: /^escapeRegExp$/, classes: ['redos'] },
];

/** String and array methods whose result carries the receiver's data. */
export const PASSING_METHODS = new Set([
  'concat', 'slice', 'substring', 'substr', 'trim', 'trimStart', 'trimEnd', 'toLowerCase', 'toUpperCase', 'toLocaleLowerCase', 'toLocaleUpperCase',
  'split', 'join', 'replace', 'replaceAll', 'padStart', 'padEnd', 'normalize', 'at', 'charAt', 'repeat', 'toString', 'valueOf', 'flat', 'flatMap',
  'reverse', 'sort', 'filter', 'map', 'find', 'pop', 'shift', 'values', 'get', 'getAll', 'entries', 'keys', 'toJSON', 'format', 'trimLeft', 'trimRight',
]);
/** Array methods that call their callback with each element (the element is as tainted as the array). */
export const ELEMENT_CALLBACKS = new Set(['forEach', 'map', 'filter', 'find', 'some', 'every', 'flatMap', 'reduce', 'then']);
/** Library or global calls whose result carries their arguments' data. */
export const PASSING_CALLS = /^(?:String|JSON\.stringify|JSON\.parse|decodeURIComponent|decodeURI|unescape|Buffer\.from|Array\.from|Object\.values|Object\.entries|Object\.assign|util\.format|path\.(?:join|resolve|normalize|dirname|relative)|url\.(?:parse|resolve|format)|URL|querystring\.(?:parse|stringify)|qs\.(?:parse|stringify)|atob|btoa|marked|marked\.parse)$/;
