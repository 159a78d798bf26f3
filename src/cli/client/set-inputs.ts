/**
 * `--set key=value`: the value is typed by the tool's input schema (fetched once), so a string
 * stays a string — `--set token=0123` sends "0123" — unless the schema asks for a number, a
 * boolean, an array or an object. `--set key:=json` sends raw JSON whatever the schema says.
 */
import { InvalidArgumentError } from 'commander';
import { ApiClient, ClientError, EXIT } from './api-client';

export interface SetPair {
  key: string;
  raw: string;
  /** `key:=value`: the value is JSON. */
  json: boolean;
}

export function collectSet(pair: string, previous: SetPair[] = []): SetPair[] {
  const at = pair.indexOf('=');
  if (at < 1) throw new InvalidArgumentError(`expected key=value, got '${pair}'`);
  const json = pair[at - 1] === ':';
  const key = pair.slice(0, json ? at - 1 : at);
  if (!key) throw new InvalidArgumentError(`expected key=value, got '${pair}'`);
  return [...previous, { key, raw: pair.slice(at + 1), json }];
}

type InputSchema = { type?: string | string[] };

/** The pairs as inputs; the tool's schema is fetched only when some pair needs it. */
export async function typedInputs(client: ApiClient, toolId: string, pairs: SetPair[]): Promise<Record<string, unknown>> {
  if (pairs.length === 0) return {};
  const schemas = pairs.some((p) => !p.json)
    ? ((await client.request('GET', `/v1/tools/${encodeURIComponent(toolId)}`)) as { inputs?: Record<string, InputSchema> }).inputs ?? {}
    : {};
  return Object.fromEntries(pairs.map((p) => [p.key, p.json ? parseJson(p) : typed(p, schemas[p.key])]));
}

function parseJson(p: SetPair): unknown {
  try {
    return JSON.parse(p.raw);
  } catch (err) {
    throw new ClientError('INVALID_INPUT', `--set ${p.key}: ${(err as Error).message}`, `${p.key}:= takes JSON; ${p.key}= takes the text as it is`, EXIT.usage);
  }
}

/** The one type the schema names (a `["string","null"]` union counts as its non-null member). */
function schemaType(schema: InputSchema | undefined): string | undefined {
  const types = schema?.type === undefined ? [] : ([] as string[]).concat(schema.type).filter((t) => t !== 'null');
  return types.includes('string') || types.length !== 1 ? undefined : types[0];
}

function typed(p: SetPair, schema: InputSchema | undefined): unknown {
  const type = schemaType(schema);
  if (type === undefined) return p.raw;
  if (type === 'integer' || type === 'number') {
    const n = p.raw.trim() === '' ? NaN : Number(p.raw);
    if (Number.isNaN(n)) throw new ClientError('INVALID_INPUT', `--set ${p.key}: expected a number, got '${p.raw}'`, `the tool's schema says ${p.key} is ${type === 'integer' ? 'an integer' : 'a number'}`, EXIT.usage);
    return n;
  }
  if (type === 'boolean') {
    if (p.raw !== 'true' && p.raw !== 'false') throw new ClientError('INVALID_INPUT', `--set ${p.key}: expected true or false, got '${p.raw}'`, `the tool's schema says ${p.key} is a boolean`, EXIT.usage);
    return p.raw === 'true';
  }
  if (type === 'any') {
    try {
      return JSON.parse(p.raw);
    } catch {
      return p.raw;
    }
  }
  // array, object: JSON is the only way to write them on a command line.
  return parseJson(p);
}
