/**
 * Limits every JSON value the service accepts or stores must hold, checked without recursion so
 * that no value can overflow a stack on its way in (the embedded database's WASM backend overflows
 * its stack on jsonb nested about 1,050 levels deep and stays broken afterwards).
 */
import { AppException } from './errors';

/** Deepest nesting of objects and arrays in a request body (and so in any tool input). */
export const MAX_JSON_DEPTH = 64;
/** Tool outputs may wrap their input a few times over; still far below what any stage can take. */
export const MAX_OUTPUT_DEPTH = 128;
/** A high surrogate with no low one after it, or a low one with no high one before it. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Path segments shown when naming where a body went wrong. */
const SHOWN_SEGMENTS = 6;

interface Frame {
  array: boolean;
  /** Current index (arrays), or where the current member name's string starts (objects; -1 before the first): names are read only for an error. */
  key: number;
  expectKey: boolean;
}

/**
 * Refuses, before parsing, a JSON text that nests deeper than `maxDepth` or whose strings hold a
 * NUL character or an unpaired UTF-16 surrogate (PostgreSQL text and jsonb refuse both).
 * Syntax errors are left to the parser. Throws INVALID_REQUEST naming the member.
 */
export function checkJsonText(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const stack: Frame[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = scanString(text, i, stack);
      const top = stack[stack.length - 1];
      if (top?.expectKey) top.key = i;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (stack.length >= maxDepth) {
        throw refusal(text, stack, `nests deeper than ${maxDepth} levels`, `at most ${maxDepth} levels of nested objects and arrays`);
      }
      stack.push(c === 0x5b ? { array: true, key: 0, expectKey: false } : { array: false, key: -1, expectKey: true });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.array) top.key += 1;
      else if (top) top.expectKey = true;
    } else if (c === 0x3a) {
      const top = stack[stack.length - 1];
      if (top) top.expectKey = false;
    }
  }
}

/** Index of the closing quote of the string opening at `start`; checks its escapes on the way. */
function scanString(text: string, start: number, stack: Frame[]): number {
  let i = start + 1;
  let pendingHigh = false;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) break;
    if (c === 0x5c) {
      const escaped = text.charCodeAt(i + 1);
      if (escaped === 0x75 /* u */) {
        const unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
        if (unit === 0) throw refusal(text, stack, 'holds a NUL character (\\u0000)', 'a string without NUL characters');
        const low = unit >= 0xdc00 && unit <= 0xdfff;
        if (low !== pendingHigh) throw unpaired(text, stack);
        pendingHigh = unit >= 0xd800 && unit <= 0xdbff;
        i += 6;
        continue;
      }
      if (pendingHigh) throw unpaired(text, stack);
      i += 2;
      continue;
    }
    // An escaped high surrogate may be completed by a raw low one.
    if (pendingHigh && !(c >= 0xdc00 && c <= 0xdfff)) throw unpaired(text, stack);
    pendingHigh = false;
    if (c === 0) throw refusal(text, stack, 'holds a NUL character', 'a string without NUL characters');
    i++;
  }
  if (pendingHigh) throw unpaired(text, stack);
  return i;
}

function unpaired(text: string, stack: Frame[]): AppException {
  return refusal(text, stack, 'holds an unpaired UTF-16 surrogate', 'well-formed Unicode text');
}

/** The member name whose string opens at `start` (its escapes read, when they are valid). */
function memberName(text: string, start: number): string {
  const end = closingQuote(text, start);
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return text.slice(start + 1, end);
  }
}

/** Where the string opening at `start` closes, skipping escapes as scanString does (the text's end if it does not). */
function closingQuote(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) !== 0x5c ? 1 : text.charCodeAt(i + 1) === 0x75 ? 6 : 2;
  return i;
}

function refusal(text: string, stack: Frame[], problem: string, expected: string): AppException {
  const parameter = pathOf(text, stack) || '(body)';
  return AppException.invalidRequest(`Invalid parameter '${parameter}': the request body ${problem}`, { parameter, expected });
}

function pathOf(text: string, stack: Frame[]): string {
  let path = '';
  for (const [index, frame] of stack.entries()) {
    if (index === SHOWN_SEGMENTS) return `${path}…`;
    if (frame.array) path += `[${frame.key}]`;
    else if (frame.key !== -1) {
      const name = memberName(text, frame.key);
      path += path ? `.${name}` : name;
    }
  }
  return path;
}

/**
 * Why a value cannot be stored or served as it is — nesting deeper than `maxDepth`, or a string
 * with NUL or an unpaired surrogate (PostgreSQL refuses both) — or null when it can. Iterative:
 * any depth is safe to check.
 */
export function unstorableProblem(value: unknown, maxDepth: number): string | null {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return 'a string holds a NUL character';
      if (UNPAIRED_SURROGATE.test(current)) return 'a string holds an unpaired UTF-16 surrogate';
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxDepth) return `it nests deeper than ${maxDepth} levels`;
    for (const [key, member] of Object.entries(current)) pending.push([key, depth + 1], [member, depth + 1]);
  }
  return null;
}
