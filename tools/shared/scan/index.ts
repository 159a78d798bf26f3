/** Small pieces every scanner of this family shares: output schemas, counts and a stable order. */
import type { ToolOutputDefinition } from '@tos/sdk';
import { LOCKFILE_FORMATS } from '../lockfiles/model';

export { compareText } from '../lockfiles/model';

/** `{ key: count }` for every key, counting the items whose `of(item)` is that key. */
export function countBy<K extends string, T>(keys: readonly K[], items: readonly T[], of: (item: T) => K): Record<K, number> {
  const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  for (const item of items) counts[of(item)] += 1;
  return counts;
}

/** An output object holding one integer per key. */
export function countsOutput(keys: readonly string[], description: string): ToolOutputDefinition {
  return {
    type: 'object',
    description,
    properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])),
    additionalProperties: false,
  };
}

/** The `lockfiles` output of the lockfile tools: what was read, and optionally how much was skipped. */
export function lockfilesOutput(options: { skipped?: boolean } = {}): ToolOutputDefinition {
  const fields = ['file', 'format', 'ecosystem', 'packages', ...(options.skipped ? ['skipped'] : [])];
  return {
    type: 'array',
    description: 'The lockfiles read.',
    items: {
      type: 'object',
      additionalProperties: false,
      required: fields,
      properties: {
        file: { type: 'string' },
        format: { enum: [...LOCKFILE_FORMATS] },
        ecosystem: { type: 'string' },
        packages: { type: 'integer', description: 'Distinct package versions it pins.' },
        ...(options.skipped ? { skipped: { type: 'integer', description: 'Entries naming no installed version.' } } : {}),
      },
    },
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
export function pageOutputs(what: string): Record<'count' | 'total' | 'truncated', ToolOutputDefinition> {
  return {
    count: { type: 'integer', description: `${what} returned.` },
    total: { type: 'integer', description: `${what} found (before max_results).` },
    truncated: { type: 'boolean', description: 'True when total > count: the worst ones were kept.' },
  };
}
export * from './files';
