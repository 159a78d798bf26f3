/**
 * The template functions Helm charts call most: Go's builtins, Helm's own (include, tpl,
 * toYaml, required, lookup, …) and the Sprig functions charts lean on. Functions that depend on
 * a live cluster or on time and chance return fixed values (lookup finds nothing; randAlphaNum
 * gives "x"s), which is what a scan of the chart's defaults needs.
 */
import { createHash } from 'node:crypto';
import { RE2JS } from 're2js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { printed, TemplateError, truthy, type Renderer, type TemplateFunction } from './go-template';

type Map = Record<string, unknown>;

const text = (value: unknown) => printed(value);
const isMap = (value: unknown): value is Map => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === null || value === undefined ? [] : [value]);
const number = (value: unknown) => (typeof value === 'number' ? value : Number.parseFloat(text(value)) || 0);
const integer = (value: unknown) => Math.trunc(number(value));

/** Go's %q: a double-quoted string with Go escapes (JSON's are the same for what charts hold). */
const goQuote = (value: unknown) => JSON.stringify(text(value));

function indent(spaces: unknown, value: unknown): string {
  const pad = ' '.repeat(Math.max(0, integer(spaces)));
  return text(value)
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

/** Go's fmt verbs that charts use: %s %d %v %q %f %t %%. */
function sprintf(format: unknown, ...args: unknown[]): string {
  let next = 0;
  return text(format).replace(/%(?:[-+# 0]*\d*(?:\.\d+)?)([sdvqftx%])/g, (_match, verb: string) => {
    if (verb === '%') return '%';
    const value = args[next++];
    if (verb === 'q') return goQuote(value);
    if (verb === 'd') return String(integer(value));
    if (verb === 'x') return integer(value).toString(16);
    return text(value);
  });
}

function deepMerge(target: Map, source: unknown, overwrite: boolean): Map {
  if (!isMap(source)) return target;
  for (const [key, value] of Object.entries(source)) {
    if (isMap(target[key]) && isMap(value)) deepMerge(target[key] as Map, value, overwrite);
    else if (overwrite || target[key] === undefined || target[key] === null) target[key] = structuredClone(value);
  }
  return target;
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' || typeof b === 'number') return number(a) - number(b);
  return text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0;
}

function index(collection: unknown, ...keys: unknown[]): unknown {
  let current = collection;
  for (const key of keys) {
    if (current === null || current === undefined) return undefined;
    current = (current as Record<string | number, unknown>)[key as string | number];
  }
  return current;
}

export const HELM_FUNCTIONS: Readonly<Record<string, TemplateFunction>> = {
  // Helm
  include(this: Renderer, name, dot) {
    return this.include(text(name), dot);
  },
  tpl(this: Renderer, template, dot) {
    return this.renderString(text(template), dot);
  },
  required(message, value) {
    if (value === null || value === undefined || value === '') throw new TemplateError(`required value missing: ${text(message)}`);
    return value;
  },
  fail(message) {
    throw new TemplateError(`fail: ${text(message)}`);
  },
  toYaml: (value) => (value === null || value === undefined ? 'null' : stringifyYaml(value, { lineWidth: 0 }).replace(/\n$/, '')),
  fromYaml: (value) => parseYaml(text(value)) ?? {},
  toJson: (value) => JSON.stringify(value ?? null),
  toPrettyJson: (value) => JSON.stringify(value ?? null, null, '  '),
  fromJson: (value) => JSON.parse(text(value)) as unknown,
  lookup: () => ({}),
  // Go builtins
  eq: (a, ...others) => others.some((other) => a === other),
  ne: (a, b) => a !== b,
  lt: (a, b) => compare(a, b) < 0,
  le: (a, b) => compare(a, b) <= 0,
  gt: (a, b) => compare(a, b) > 0,
  ge: (a, b) => compare(a, b) >= 0,
  not: (value) => !truthy(value),
  len: (value) => (Array.isArray(value) ? value.length : isMap(value) ? Object.keys(value).length : text(value).length),
  index,
  print: (...args) => args.map((arg, at) => (at > 0 && typeof arg !== 'string' && typeof args[at - 1] !== 'string' ? ' ' : '') + text(arg)).join(''),
  println: (...args) => `${args.map(text).join(' ')}\n`,
  printf: sprintf,
  html: (value) => text(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`),
  urlquery: (...args) => encodeURIComponent(args.map(text).join('')),
  // Sprig: defaults and logic
  default: (fallback, ...value) => (value.length === 0 || !truthy(value[0]) ? fallback : value[0]),
  empty: (value) => !truthy(value),
  coalesce: (...values) => values.find(truthy),
  ternary: (yes, no, condition) => (truthy(condition) ? yes : no),
  kindIs: (kind, value) => kindOf(value) === text(kind),
  kindOf: (value) => kindOf(value),
  typeOf: (value) => kindOf(value),
  semverCompare: () => true,
  // Sprig: strings
  quote: (...values) => values.filter((value) => value !== undefined && value !== null).map(goQuote).join(' '),
  squote: (...values) => values.filter((value) => value !== undefined && value !== null).map((value) => `'${text(value)}'`).join(' '),
  indent,
  nindent: (spaces, value) => `\n${indent(spaces, value)}`,
  trim: (value) => text(value).trim(),
  trimAll: (characters, value) => text(value).replace(new RegExp(`^[${escapeClass(text(characters))}]+|[${escapeClass(text(characters))}]+$`, 'g'), ''),
  trimSuffix: (suffix, value) => (text(value).endsWith(text(suffix)) && text(suffix) ? text(value).slice(0, -text(suffix).length) : text(value)),
  trimPrefix: (prefix, value) => (text(value).startsWith(text(prefix)) ? text(value).slice(text(prefix).length) : text(value)),
  trunc: (length, value) => (integer(length) >= 0 ? text(value).slice(0, integer(length)) : text(value).slice(integer(length))),
  lower: (value) => text(value).toLowerCase(),
  upper: (value) => text(value).toUpperCase(),
  title: (value) => text(value).replace(/\b\w/g, (char) => char.toUpperCase()),
  replace: (from, to, value) => text(value).split(text(from)).join(text(to)),
  contains: (part, value) => text(value).includes(text(part)),
  hasPrefix: (prefix, value) => text(value).startsWith(text(prefix)),
  hasSuffix: (suffix, value) => text(value).endsWith(text(suffix)),
  repeat: (count, value) => text(value).repeat(Math.max(0, Math.min(integer(count), 10_000))),
  nospace: (value) => text(value).replace(/\s/g, ''),
  cat: (...values) => values.filter((value) => value !== null && value !== undefined).map(text).join(' '),
  kebabcase: (value) => text(value).replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/[_\s]+/g, '-').toLowerCase(),
  snakecase: (value) => text(value).replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[-\s]+/g, '_').toLowerCase(),
  b64enc: (value) => Buffer.from(text(value)).toString('base64'),
  b64dec: (value) => Buffer.from(text(value), 'base64').toString(),
  sha256sum: (value) => createHash('sha256').update(text(value)).digest('hex'),
  randAlphaNum: (count) => 'x'.repeat(Math.max(0, Math.min(integer(count), 1024))),
  randAlpha: (count) => 'x'.repeat(Math.max(0, Math.min(integer(count), 1024))),
  uuidv4: () => '00000000-0000-4000-8000-000000000000',
  now: () => '2000-01-01T00:00:00Z',
  date: () => '2000-01-01',
  toString: (value: unknown) => text(value),
  toStrings: (value) => list(value).map(text),
  int: integer,
  int64: integer,
  float64: number,
  atoi: integer,
  // A chart's patterns run on RE2 (linear time), as Go's regexp does.
  regexMatch: (pattern, value) => RE2JS.compile(text(pattern)).matcher(text(value)).find(),
  regexReplaceAll: (pattern, value, replacement) => RE2JS.compile(text(pattern)).matcher(text(value)).replaceAll(text(replacement)),
  regexFind: (pattern, value) => {
    const matcher = RE2JS.compile(text(pattern)).matcher(text(value));
    return matcher.find() ? matcher.group() : '';
  },
  split: (separator, value) => Object.fromEntries(text(value).split(text(separator)).map((part, at) => [`_${at}`, part])),
  splitList: (separator, value) => text(value).split(text(separator)),
  join: (separator, value) => list(value).map(text).join(text(separator)),
  // Sprig: numbers
  add: (...values) => values.reduce<number>((sum, value) => sum + number(value), 0),
  add1: (value) => integer(value) + 1,
  sub: (a, b) => number(a) - number(b),
  mul: (...values) => values.reduce<number>((product, value) => product * number(value), 1),
  div: (a, b) => Math.trunc(number(a) / number(b)),
  mod: (a, b) => integer(a) % integer(b),
  max: (...values) => Math.max(...values.map(number)),
  min: (...values) => Math.min(...values.map(number)),
  until: (count) => Array.from({ length: Math.max(0, Math.min(integer(count), 10_000)) }, (_, at) => at),
  // Sprig: lists and dicts
  list: (...values) => values,
  first: (value) => list(value)[0],
  last: (value) => list(value).at(-1),
  rest: (value) => list(value).slice(1),
  initial: (value) => list(value).slice(0, -1),
  append: (value, item) => [...list(value), item],
  prepend: (value, item) => [item, ...list(value)],
  concat: (...values) => values.flatMap(list),
  has: (item, value) => list(value).includes(item),
  without: (value, ...items) => list(value).filter((item) => !items.includes(item)),
  uniq: (value) => [...new Set(list(value))],
  compact: (value) => list(value).filter(truthy),
  sortAlpha: (value) => list(value).map(text).sort(),
  reverse: (value) => [...list(value)].reverse(),
  dict: (...pairs) => Object.fromEntries(Array.from({ length: Math.floor(pairs.length / 2) }, (_, at) => [text(pairs[at * 2]), pairs[at * 2 + 1]])),
  get: (map, key) => (isMap(map) ? (map[text(key)] ?? '') : ''),
  set: (map, key, value) => (isMap(map) ? Object.assign(map, { [text(key)]: value }) : map),
  unset: (map, key) => {
    if (isMap(map)) delete map[text(key)];
    return map;
  },
  hasKey: (map, key) => isMap(map) && Object.hasOwn(map, text(key)),
  keys: (...maps) => maps.filter(isMap).flatMap((map) => Object.keys(map)),
  values: (map) => (isMap(map) ? Object.values(map) : []),
  pick: (map, ...keys) => (isMap(map) ? Object.fromEntries(Object.entries(map).filter(([key]) => keys.map(text).includes(key))) : {}),
  omit: (map, ...keys) => (isMap(map) ? Object.fromEntries(Object.entries(map).filter(([key]) => !keys.map(text).includes(key))) : {}),
  merge: (target, ...sources) => sources.reduce<Map>((merged, source) => deepMerge(merged, source, false), isMap(target) ? target : {}),
  mergeOverwrite: (target, ...sources) => sources.reduce<Map>((merged, source) => deepMerge(merged, source, true), isMap(target) ? target : {}),
  deepCopy: (value) => structuredClone(value),
};

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'invalid';
  if (Array.isArray(value)) return 'slice';
  if (typeof value === 'object') return 'map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float64';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

function escapeClass(characters: string): string {
  return characters.replace(/[\]\\^-]/g, '\\$&');
}
