/** Ordering and counting that tools' outputs share, so the same input always lists the same way. */

/** Code-unit order: the same whatever the locale (localeCompare is not). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `{ key: count }` for every key, zero included, counting the items whose `of(item)` is that key. */
export function countBy<K extends string, T>(keys: readonly K[], items: Iterable<T>, of: (item: T) => K): Record<K, number> {
  const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  for (const item of items) counts[of(item)] += 1;
  return counts;
}

/** How many items have each `of(item)`, for keys not known in advance: in the order first met. */
export function tally<K, T>(items: Iterable<T>, of: (item: T) => K): Map<K, number> {
  const counts = new Map<K, number>();
  for (const item of items) {
    const key = of(item);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
