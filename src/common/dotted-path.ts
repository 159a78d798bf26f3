/** The member a dotted path (`checks.0.latency_ms`) names inside a JSON value, if there is one. */
export function valueAt(root: unknown, path: string): { found: boolean; value?: unknown } {
  let current = root;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.prototype.hasOwnProperty.call(current, step)) return { found: false };
    current = (current as Record<string, unknown>)[step];
  }
  return { found: true, value: current };
}
