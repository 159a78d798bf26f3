/**
 * How every `tos` command prints its result, client and operator alike: a table for lists and
 * `key: value` lines otherwise; `--json [fields]` for JSON (a list prints as an array of its
 * items), `--jq <expr>` to filter that JSON. `--output json|text` is the older spelling of the same.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { Column, cellText, renderTable } from './table';

export interface OutputOptions {
  output?: 'json' | 'text';
  json?: string | true;
  jq?: string;
}

/** How one command's result reads: columns for a list, the fields `--json` may name. */
export interface View<T = Record<string, unknown>> {
  columns?: Column<T>[];
  fields?: readonly string[];
  /** Text of a single result when `key: value` lines are not the best form (a sign-in link). */
  text?: (result: T) => string;
}

/** Adds --json, --jq and --output to a command; `fields` are listed in its help. */
export function addOutputOptions(command: Command, view: View<never> = {}): Command {
  const fields = view.fields ? ` (fields: ${view.fields.join(', ')})` : '';
  return command
    .addOption(new Option('--json [fields]', `print JSON: every field, or the comma-separated fields named${fields}`))
    .addOption(new Option('--jq <expression>', 'filter the JSON output with a jq expression (implies --json)'))
    .addOption(new Option('--output <format>', 'json or text (older spelling of --json)').choices(['json', 'text']));
}

export const wantsJson = (o: OutputOptions): boolean => o.json !== undefined || o.jq !== undefined || o.output === 'json';

/** Writes the result the way the options ask. */
export async function emit(raw: unknown, view: View<never>, o: OutputOptions, out: NodeJS.WriteStream = process.stdout): Promise<void> {
  // As JSON carries it (dates as ISO strings): an operator result reads the same opened directly as through the service.
  const result: unknown = raw === undefined ? null : JSON.parse(JSON.stringify(raw));
  if (!wantsJson(o)) {
    out.write(asText(result, view as View, out.isTTY ? out.columns : undefined));
    return;
  }
  const selected = typeof o.json === 'string' ? pick(result, fieldList(o.json, view.fields)) : result;
  if (o.jq === undefined) {
    out.write(`${JSON.stringify(selected, null, 2)}\n`);
    return;
  }
  // jq itself, compiled to WebAssembly and shipped in the package (no binary to install); loaded only here.
  const jq = await import('jq-wasm');
  let filtered: string;
  try {
    filtered = await jq.raw(JSON.stringify(selected ?? null), o.jq, ['-r']);
  } catch (err) {
    throw new InvalidArgumentError(`--jq: ${(err as Error).message.split('\n')[0]}`);
  }
  out.write(filtered === '' ? '' : `${filtered.replace(/\n$/, '')}\n`);
}

function asText(result: unknown, view: View, width: number | undefined): string {
  if (Array.isArray(result)) {
    if (view.columns) return result.length === 0 ? 'no results\n' : renderTable(result as Record<string, unknown>[], view.columns, width);
    return result.map((item) => `${cellText(item)}\n`).join('');
  }
  if (typeof result !== 'object' || result === null) return `${String(result)}\n`;
  if (view.text) return view.text(result as Record<string, unknown>);
  return Object.entries(result)
    .map(([key, value]) => `${key}: ${scalarList(value) ? value.join(', ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}\n`)
    .join('');
}

/** A list of names (scopes, tool ids) reads better as `a, b` than as JSON. */
const scalarList = (value: unknown): value is unknown[] => Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null);

function fieldList(spec: string, known: readonly string[] | undefined): string[] {
  const fields = spec.split(',').map((f) => f.trim()).filter(Boolean);
  const unknown = known ? fields.filter((f) => !known.includes(f)) : [];
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown JSON field '${unknown[0]}'; available fields: ${known!.join(', ')}`);
  return fields;
}

function pick(result: unknown, fields: string[]): unknown {
  if (fields.length === 0) return result;
  const one = (item: unknown) => (typeof item === 'object' && item !== null ? Object.fromEntries(fields.map((f) => [f, (item as Record<string, unknown>)[f] ?? null])) : item);
  return Array.isArray(result) ? result.map(one) : one(result);
}
