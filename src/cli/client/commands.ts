/** Client commands of `tos` (tools, invoke, executions): talk to a running service over HTTP. */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ApiClient, ClientError, connectionFromEnv, EXIT } from './api-client';
import { exitCodeFor, followExecution } from './follow';
import { saveProfile } from './profiles';

type OutputFormat = 'json' | 'text';

export const outputOption = () => new Option('--output <format>', 'json or text').choices(['json', 'text']).default('text');

/** Prints a result: JSON with --output json, else a readable form. */
export function print(result: unknown, format: OutputFormat): void {
  if (format === 'json' || typeof result !== 'object' || result === null) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(result)) process.stdout.write(`${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`);
}

/** Runs a client action; a ClientError prints code, message and suggestion and sets its exit code. */
export async function runClient(format: OutputFormat, action: (client: ApiClient) => Promise<{ result: unknown; exitCode?: number }>): Promise<void> {
  try {
    const { result, exitCode } = await action(new ApiClient(connectionFromEnv()));
    print(result, format);
    process.exitCode = exitCode ?? EXIT.ok;
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const body = { error: { code: err.code, message: err.message, ...(err.suggestion ? { suggestion: err.suggestion } : {}) } };
    if (format === 'json') process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    else process.stderr.write(`tos: ${err.code}: ${err.message}${err.suggestion ? `\n  suggestion: ${err.suggestion}` : ''}\n`);
    process.exitCode = err.exitCode;
  }
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

/** `--set key=value`: the value parsed as JSON when it is JSON, else kept as a string. */
function collectSet(pair: string, previous: Record<string, unknown>): Record<string, unknown> {
  const at = pair.indexOf('=');
  if (at < 1) throw new InvalidArgumentError(`expected key=value, got '${pair}'`);
  const raw = pair.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    /* a plain string */
  }
  return { ...previous, [pair.slice(0, at)]: value };
}

function readInput(spec: string | undefined): Record<string, unknown> {
  if (spec === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(spec.startsWith('@') ? readFileSync(spec.slice(1), 'utf8') : spec);
  } catch (err) {
    throw new ClientError('INVALID_INPUT', `--input: ${(err as Error).message}`, "pass a JSON object, e.g. --input '{\"ms\":0}' or --input @file.json", EXIT.usage);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ClientError('INVALID_INPUT', '--input must be a JSON object', 'wrap the inputs in { }', EXIT.usage);
  return parsed as Record<string, unknown>;
}

const id = (value: string) => encodeURIComponent(value);

/** Reads stdin to its end (keys and secret values never go on the command line). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export function registerClientCommands(program: Command): void {
  program.option('--profile <name>', 'client: saved connection to use (default: TOS_PROFILE or "default")');
  program.hook('preAction', () => {
    const { profile } = program.opts<{ profile?: string }>();
    if (profile) process.env.TOS_PROFILE = profile;
  });
  program
    .command('login')
    .description('client: save a connection profile; the API key is read from stdin')
    .requiredOption('--url <url>', 'service URL')
    .action(async (o) => {
      const apiKey = await readStdin();
      if (!apiKey) throw new InvalidArgumentError('the API key read from stdin is empty');
      const file = saveProfile(program.opts<{ profile?: string }>().profile || process.env.TOS_PROFILE || 'default', { url: o.url, api_key: apiKey });
      process.stdout.write(`saved to ${file}\n`);
    });

  const tools = program.command('tools').description('client: browse the tool catalogue (TOS_URL, TOS_API_KEY)');
  tools.command('list').addOption(outputOption()).action((o) => runClient(o.output, async (c) => ({ result: await c.request('GET', '/v1/tools') })));
  tools.command('show <tool_id>').addOption(outputOption()).action((toolId: string, o) => runClient(o.output, async (c) => ({ result: await c.request('GET', `/v1/tools/${id(toolId)}`) })));

  program
    .command('invoke <tool_id>')
    .description('client: run a tool; --async returns at once, --wait follows it to the end')
    .option('--input <json|@file>', 'inputs as a JSON object, or @file.json')
    .option('--set <key=value>', 'one input (repeatable; JSON values are parsed)', collectSet, {})
    .option('--async', 'queue the execution and return its id')
    .option('--wait', 'with --async: follow the execution live until it ends')
    .option('--timeout <seconds>', 'execution timeout, enforced by the service', positiveInt)
    .option('--no-cache', 'bypass the result cache')
    .option('--idempotency-key <key>', 'X-Idempotency-Key, to make retries safe')
    .addOption(outputOption())
    .action((toolId: string, o) =>
      runClient(o.output, async (c) => {
        const inputs = { ...readInput(o.input), ...o.set };
        const query = new URLSearchParams();
        if (o.async) query.set('async', 'true');
        if (o.timeout) query.set('timeout', String(o.timeout));
        const headers: Record<string, string> = {};
        if (o.cache === false) headers['cache-control'] = 'no-cache';
        if (o.idempotencyKey) headers['x-idempotency-key'] = o.idempotencyKey;
        const started = (await c.request('POST', `/v1/tools/${id(toolId)}/invoke${query.size ? `?${query}` : ''}`, { body: { inputs }, headers })) as { execution_id: string; status?: string };
        if (!(o.async && o.wait)) return { result: started, exitCode: exitCodeFor(started) };
        // The service enforces --timeout and then ends the stream, so waiting needs no clock of its own.
        const final = await followExecution(c, started.execution_id, undefined);
        return { result: final, exitCode: exitCodeFor(final) };
      }),
    );

  program
    .command('mcp')
    .description('client: MCP bridges')
    .command('stdio')
    .description('serve MCP over stdin/stdout, forwarding to TOS_URL/v1/mcp (for Claude Desktop and other stdio hosts)')
    .action(async () => (await import('./mcp-stdio')).serveMcpOverStdio());

  const executions = program.command('executions').description('client: list, inspect, cancel and follow executions');
  executions
    .command('list')
    .option('--status <status>', 'only this status')
    .option('--tool-id <tool_id>', 'only this tool')
    .option('--limit <n>', 'page size', positiveInt)
    .addOption(outputOption())
    .action((o) =>
      runClient(o.output, async (c) => {
        const query = new URLSearchParams();
        if (o.status) query.set('status', o.status);
        if (o.toolId) query.set('tool_id', o.toolId);
        if (o.limit) query.set('limit', String(o.limit));
        return { result: await c.request('GET', `/v1/executions${query.size ? `?${query}` : ''}`) };
      }),
    );
  executions.command('show <execution_id>').addOption(outputOption()).action((executionId: string, o) => runClient(o.output, async (c) => ({ result: await c.request('GET', `/v1/executions/${id(executionId)}`) })));
  executions.command('cancel <execution_id>').addOption(outputOption()).action((executionId: string, o) => runClient(o.output, async (c) => ({ result: await c.request('DELETE', `/v1/executions/${id(executionId)}`) })));
  executions
    .command('follow <execution_id>')
    .description('show live progress until the execution ends (exit code per its outcome)')
    .option('--timeout <seconds>', 'stop following after this long', positiveInt)
    .addOption(outputOption())
    .action((executionId: string, o) =>
      runClient(o.output, async (c) => {
        const final = await followExecution(c, executionId, o.timeout);
        return { result: final, exitCode: exitCodeFor(final) };
      }),
    );
}
