/** What the taint engine knows about a value: where tainted data came from, and what the value is. */
import type { TSESTree } from '@typescript-eslint/types';
import type { SinkClass } from './rules';

export type FunctionNode = TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

/** One place on a taint path. */
export interface Step {
  file: string;
  line: number;
  column: number;
  note: string;
}

/**
 * Tainted data and the path it took. A path that starts at a parameter (`param` set) is a
 * function's summary: it becomes a real path when a caller passes tainted data in that position.
 */
export interface Taint {
  steps: readonly Step[];
  param?: { owner: FunctionNode; index: number };
  /** Still the request's own value, possibly an object (body, query): not yet turned into a string. */
  raw: boolean;
  /** Sink classes a sanitizer on the path made it safe for. */
  clean: ReadonlySet<SinkClass>;
  /** From the browser's URL: a threat to browser sinks only (a page's fetch is not SSRF). */
  browser?: boolean;
}

export interface Value {
  taint?: Taint;
  /** A request object: its input members (params, query, body …) are sources. */
  request?: 'http' | 'koa';
  /** A response object: redirect, send, write … are sinks. */
  response?: boolean;
  /** A module, or a member of one: 'child_process', 'child_process.exec'. */
  module?: string;
  /** The functions this value may be. */
  fns?: readonly FunctionNode[];
  /** Known members: object literals, a module's exports, an instance's methods. */
  props?: Map<string, Value>;
  /** A class or constructor function: what `new` makes an instance of. */
  klass?: object;
}

export const NOTHING: Value = Object.freeze({});
/** Paths longer than this keep their start and end: a long path is as useful and must not grow without bound. */
const MAX_STEPS = 40;

export function withStep(taint: Taint, step: Step): Taint {
  const steps = taint.steps.length < MAX_STEPS ? [...taint.steps, step] : [...taint.steps.slice(0, MAX_STEPS / 2), ...taint.steps.slice(-MAX_STEPS / 2 + 1), step];
  return { ...taint, steps };
}

/** The taint of a value derived from another one (a string built from it): no longer raw. */
export function derived(taint: Taint | undefined): Taint | undefined {
  return taint && (taint.raw ? { ...taint, raw: false } : taint);
}

export function cleaned(taint: Taint | undefined, classes: readonly SinkClass[]): Taint | undefined {
  return taint && { ...taint, raw: false, clean: new Set([...taint.clean, ...classes]) };
}

/** Of two taints the one to keep: a real source over a parameter's summary, the shorter path otherwise. */
function firstTaint(a: Taint | undefined, b: Taint | undefined): Taint | undefined {
  if (!a) return b;
  if (!b) return a;
  if (Boolean(a.param) !== Boolean(b.param)) return a.param ? b : a;
  return a.steps.length <= b.steps.length ? a : b;
}

/** What a value may be when it comes from either of two places (branches, repeated assignments). */
export function join(a: Value, b: Value): Value {
  if (a === b || b === NOTHING) return a;
  if (a === NOTHING) return b;
  const fns = a.fns && b.fns ? [...new Set([...a.fns, ...b.fns])] : (a.fns ?? b.fns);
  let props = a.props ?? b.props;
  if (a.props && b.props) {
    props = new Map(a.props);
    for (const [key, value] of b.props) props.set(key, props.has(key) ? join(props.get(key) as Value, value) : value);
  }
  return {
    taint: firstTaint(a.taint, b.taint),
    request: a.request ?? b.request,
    response: a.response || b.response || undefined,
    module: a.module ?? b.module,
    fns,
    props,
    klass: a.klass ?? b.klass,
  };
}

export function taintOf(values: readonly Value[]): Taint | undefined {
  let found: Taint | undefined;
  for (const value of values) found = firstTaint(found, value.taint);
  return found;
}
