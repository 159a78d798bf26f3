/** Small pieces every scanner of this family shares: output schemas, pages and text kept small. */
import type { ToolOutputProperty } from '@tos/sdk';
import { LOCKFILE_FORMATS } from '../lockfiles/model';

/** An output object holding one integer per key. */
export function countsOutput<const K extends string>(keys: readonly K[], description: string) {
  const properties = Object.fromEntries(keys.map((key) => [key, { type: 'integer' } as const])) as Record<K, { readonly type: 'integer' }>;
  return { type: 'object', description, properties, additionalProperties: false } as const satisfies ToolOutputProperty;
}

const LOCKFILE_MEMBERS = {
  file: { type: 'string' },
  format: { enum: LOCKFILE_FORMATS },
  ecosystem: { type: 'string' },
  packages: { type: 'integer', description: 'Distinct package versions it pins.' },
} as const;
const SKIPPED_MEMBER = { skipped: { type: 'integer', description: 'Entries naming no installed version.' } } as const;

/** The `lockfiles` output of the lockfile tools: what was read, and optionally how much was skipped. */
export function lockfilesOutput<const Skipped extends boolean = false>(options: { skipped?: Skipped } = {}) {
  const properties = options.skipped ? { ...LOCKFILE_MEMBERS, ...SKIPPED_MEMBER } : LOCKFILE_MEMBERS;
  return {
    type: 'array',
    description: 'The lockfiles read.',
    items: { type: 'object', additionalProperties: false, required: Object.keys(properties), properties },
  } as unknown as {
    readonly type: 'array';
    readonly description: string;
    readonly items: {
      readonly type: 'object';
      readonly additionalProperties: false;
      readonly required: readonly (keyof typeof LOCKFILE_MEMBERS | (Skipped extends true ? 'skipped' : never))[];
      readonly properties: typeof LOCKFILE_MEMBERS & (Skipped extends true ? typeof SKIPPED_MEMBER : unknown);
    };
  };
}

/**
 * At most `max` characters of `value` in a string of their own. A parser's value or a cut may be
 * a slice of the text it came from, which keeps that whole text alive in memory for as long as
 * the slice is kept: what a scan keeps of a large caller file must not.
 */
export function ownText(value: string, max = value.length): string {
  return Buffer.from(value.slice(0, max), 'utf16le').toString('utf16le');
}

/** The page of a sorted list a caller asked for, with the counts that say what was cut. */
export function firstResults<T>(sorted: T[], max: number): { items: T[]; count: number; total: number; truncated: boolean } {
  const items = sorted.slice(0, max);
  return { items, count: items.length, total: sorted.length, truncated: sorted.length > items.length };
}

/** The outputs that go with firstResults: `count`, `total`, `truncated`. */
export function pageOutputs(what: string) {
  return {
    count: { type: 'integer', description: `${what} returned.` },
    total: { type: 'integer', description: `${what} found (before max_results).` },
    truncated: { type: 'boolean', description: 'True when total > count: the worst ones were kept.' },
  } as const satisfies Record<string, ToolOutputProperty>;
}
export * from './files';
