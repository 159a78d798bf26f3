/** Shannon entropy, the measure the entropy rules here and gitleaks's rules share. */
import { tally } from '@tos/sdk';

/** Bits per character of the value's own character distribution. */
export function shannonEntropy(value: string): number {
  let entropy = 0;
  for (const count of tally(value, (char) => char).values()) {
    const p = count / value.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}
