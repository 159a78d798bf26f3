/**
 * Running the tools' declared examples: the example world's settings, and the comparison that
 * holds every output member to its declared value except the ones an example says vary.
 */
import { valueAt } from '../../src/common/dotted-path';
import type { ToolExample } from '@tos/sdk';
import { EXAMPLE_WORLD_ENV } from './global-setup';
import { published } from './prerequisites';

/** The service settings under which every example runs, as the e2e global setup published them. */
export function exampleWorldEnv(): Record<string, string> {
  return JSON.parse(published(EXAMPLE_WORLD_ENV, 'the example world (dnsmasq and the tools\' example servers)')) as Record<string, string>;
}

const typeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * The output as the example should see it: each varying member replaced by a marker of its
 * type, so `toEqual` against the example (marked the same way) checks presence and type only.
 */
export function comparable(output: unknown, example: Pick<ToolExample, 'varies'>): unknown {
  if (!example.varies?.length || output === null || typeof output !== 'object') return output;
  const copy = structuredClone(output) as Record<string, unknown>;
  for (const path of example.varies) {
    const { found, value } = valueAt(copy, path);
    if (!found) continue;
    const steps = path.split('.');
    const parent = valueAt(copy, steps.slice(0, -1).join('.'));
    const holder = (steps.length === 1 ? copy : parent.value) as Record<string, unknown>;
    holder[steps[steps.length - 1]] = `<varies: ${typeOf(value)}>`;
  }
  return copy;
}
