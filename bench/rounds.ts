/**
 * Paired rounds, as the upstream and OAuth benches measure (bench/README.md): a warm-up call of
 * each variant, then each round times `requests` calls of every variant in turn, alternating which
 * goes first so drift on a shared machine falls on all. Per-call microseconds are printed as the
 * median of the rounds and their spread; `printPaired` prints two variants' differences by round.
 */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

export async function timeRounds<N extends string>(calls: Record<N, () => Promise<void>>, rounds: number, requests: number, unit = 'call'): Promise<Record<N, number[]>> {
  const names = Object.keys(calls) as N[];
  const round = async (call: () => Promise<void>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < requests; i++) await call();
    return Number(process.hrtime.bigint() - started) / 1000 / requests;
  };
  for (const name of names) await round(calls[name]); // warm-up: connections, JIT, caches
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<N, number[]>;
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) times[name].push(await round(calls[name]));
  }
  const width = Math.max(...names.map((name) => name.length)) + 1;
  for (const name of names) console.log(`${name.padEnd(width)} median ${median(times[name]).toFixed(0)} µs/${unit}, rounds ${spread(times[name])} (${rounds} rounds × ${requests})`);
  return times;
}

/** `a − b` by round: its median and spread. */
export function printPaired(label: string, a: number[], b: number[]): void {
  const diffs = a.map((x, i) => x - b[i]);
  console.log(`${label}, paired by round: median ${median(diffs).toFixed(0)} µs, ${spread(diffs)}`);
}
