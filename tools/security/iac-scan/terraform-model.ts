/**
 * What Terraform checks see: the blocks of one module (the `.tf` files of one directory) as
 * hcl2json gives them (nested blocks are arrays of objects, expressions are `${…}` strings), and
 * the small vocabulary the checks are written in.
 */
import type { IacRule } from './rules';
import type { AttributePath } from './hcl-lines';

export type Json = Record<string, unknown>;

export interface TfBlock {
  kind: 'resource' | 'data' | 'provider';
  type: string;
  name: string;
  /** `aws_s3_bucket.data`, `data.aws_iam_policy_document.policy`, `provider.aws.alias`. */
  address: string;
  body: Json;
  file: string;
  /** 1-based line of the block's header. */
  line: number;
}

export interface TfModule {
  blocks: TfBlock[];
  /** Resources of `type` with an attribute (`bucket`, `vpc_id`, …) that refers to `target`. */
  referring(type: string, attribute: string, target: TfBlock): TfBlock[];
}

export interface Fault {
  /** The attribute at fault, or the nearest block holding where it should be. */
  path: AttributePath;
  message: string;
}

export interface TfCheck {
  rule: IacRule;
  types: readonly string[];
  check(block: TfBlock, module: TfModule): Fault | Fault[] | undefined;
}

/** The value at `path`; a nested block (an array of objects) is entered through its first element unless a number picks one. */
export function valueAt(body: unknown, path: AttributePath): unknown {
  let current = body;
  for (const step of path) {
    if (typeof step === 'string' && Array.isArray(current)) current = current[0];
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

/** An expression whose value Terraform knows only at plan time (`${var.x}`): checks neither pass nor fail it. */
export function isExpression(value: unknown): boolean {
  return typeof value === 'string' && /\$\{/.test(value);
}

export const isTrue = (value: unknown) => value === true || value === 'true';
export const isFalse = (value: unknown) => value === false || value === 'false';

export function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return value === undefined || value === null ? [] : [value];
}

/** The nested blocks named `name` of `body`, each with its index (for `path`). */
export function blocksOf(body: unknown, name: string): Array<[Json, number]> {
  return listOf(valueAt(body, [name])).flatMap((entry, index) => (entry && typeof entry === 'object' && !Array.isArray(entry) ? [[entry as Json, index] as [Json, number]] : []));
}

/** Whether an expression mentions the block (`aws_s3_bucket.data.id`, `"${aws_vpc.main.id}"`). */
export function refersTo(value: unknown, target: TfBlock): boolean {
  const reference = `${target.kind === 'data' ? 'data.' : ''}${target.type}.${target.name}`;
  return listOf(value).some((entry) => typeof entry === 'string' && new RegExp(`(?:^|[^\\w.-])${reference.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:[.\\[]|$)`).test(entry.replace(/^\$\{/, ' ')));
}

/** Flags an attribute that is literally false, or absent when `absent` says so (its provider default is insecure). */
export function mustBeTrue(path: AttributePath, message: string, absent: 'fails' | 'passes' = 'fails'): (block: TfBlock) => Fault | undefined {
  return (block) => {
    const value = valueAt(block.body, path);
    if (isTrue(value) || isExpression(value)) return undefined;
    if (value === undefined && absent === 'passes') return undefined;
    return { path, message: value === undefined ? `${path.filter((step) => typeof step === 'string').join('.')} is not set; ${message}` : `${path.filter((step) => typeof step === 'string').join('.')} = ${String(value)}; ${message}` };
  };
}

/** Flags an attribute that is literally true (absent is the safe default). */
export function mustNotBeTrue(path: AttributePath, message: string): (block: TfBlock) => Fault | undefined {
  return (block) => (isTrue(valueAt(block.body, path)) ? { path, message: `${path.filter((step) => typeof step === 'string').join('.')} = true; ${message}` } : undefined);
}

/** Flags an absent (or empty) attribute or block. */
export function mustBeSet(path: AttributePath, message: string): (block: TfBlock) => Fault | undefined {
  return (block) => {
    const value = valueAt(block.body, path);
    return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0) ? { path, message } : undefined;
  };
}

export const check = (rule: IacRule, types: readonly string[], run: TfCheck['check']): TfCheck => ({ rule, types, check: run });

/** Open to the whole internet. */
export const WORLD = new Set(['0.0.0.0/0', '::/0', '0.0.0.0', '*', 'Internet', 'Any', 'any', '0.0.0.0/0.0.0.0']);

/** Admin ports whose exposure to the internet scanners treat as critical: SSH and RDP. */
export const ADMIN_PORTS = [22, 3389];

/** Whether a port range `from`–`to` (numbers or strings, `-1`/`*`/`0-65535` for all) covers `port`. */
export function rangeCovers(from: unknown, to: unknown, port: number): boolean {
  const low = Number(from);
  const high = Number(to);
  if (!Number.isFinite(low) || !Number.isFinite(high)) return false;
  if (low === -1 || (low === 0 && (high === 0 || high === 65535))) return true;
  return low <= port && port <= high;
}

/** Whether a port spec (`22`, `"22-22"`, `"*"`, `"0-65535"`) covers `port`. */
export function portSpecCovers(spec: unknown, port: number): boolean {
  if (typeof spec === 'number') return spec === port;
  if (typeof spec !== 'string') return false;
  if (spec === '*') return true;
  const [from, to = from] = spec.split('-');
  return rangeCovers(from, to, port);
}
