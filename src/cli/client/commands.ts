/** Client commands of `tos` (tools, invoke, executions, workspaces, usage): talk to a running service over HTTP. */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { ApiClient, ClientError, connectionFromEnv, EXIT } from './api-client';
import { exitCodeFor, followExecution } from './follow';
import { addOutputOptions, emit, OutputOptions, View, wantsJson } from './output';
import { fetchList, ListOptions, moreHint } from './paging';
import { examples } from './help';
import { collectSet, typedInputs } from './set-inputs';
import { EXECUTION_VIEW, TOOL_VIEW, USAGE_VIEW, WORKSPACE_VIEW } from './views';
import { registerAuthCommands } from './auth-commands';

export interface ClientOutcome {
  result: unknown;
  exitCode?: number;
  /** A line for stderr in text mode (a list cut short). */
  hint?: string;
}

/** Runs a client action and prints its result; a ClientError prints code, message and suggestion and sets its exit code. */
export async function runClient(o: OutputOptions, view: View<never>, action: (client: ApiClient) => Promise<ClientOutcome>): Promise<void> {
  try {
    const { result, exitCode, hint } = await action(new ApiClient(connectionFromEnv()));
    await emit(result, view, o);
    if (hint && !wantsJson(o)) process.stderr.write(`${hint}\n`);
    process.exitCode = exitCode ?? EXIT.ok;
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    printClientError(err, wantsJson(o));
  }
}

export function printClientError(err: ClientError, json: boolean): void {
  const body = { error: { code: err.code, message: err.message, ...(err.suggestion ? { suggestion: err.suggestion } : {}) } };
  if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else process.stderr.write(`tos: ${err.code}: ${err.message}${err.suggestion ? `\n  suggestion: ${err.suggestion}` : ''}\n`);
  process.exitCode = err.exitCode;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

/** `--input <json|@file>`: a JSON object, inline or from a file. */
export function readInput(spec: string | undefined): Record<string, unknown> {
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

export const id = (value: string) => encodeURIComponent(value);

/** Reads stdin to its end (keys and secret values never go on the command line). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** `--limit` and `--paginate` of a list command. */
export function addListOptions(command: Command): Command {
  return command.option('--limit <n>', 'how many to show (fetched in pages of at most 100)', positiveInt).option('--paginate', 'fetch every page');
}

/** Lists `path` into a table (or JSON), saying on stderr when there are more. */
export async function listed(c: ApiClient, path: string, query: URLSearchParams, member: string, o: ListOptions, cursor = false): Promise<ClientOutcome> {
  const list = await fetchList(c, path, query, member, o, cursor);
  return { result: list.items, hint: moreHint(list) };
}

export function registerClientCommands(program: Command): void {
  program.option('--profile <name>', 'client: saved connection to use (default: TOS_PROFILE or "default")');
  program.hook('preAction', () => {
    const { profile } = program.opts<{ profile?: string }>();
    if (profile) process.env.TOS_PROFILE = profile;
  });
  registerAuthCommands(program);

  const tools = program.command('tools').description('browse the tool catalogue');
  examples(
    addOutputOptions(
      addListOptions(
        tools
          .command('list')
          .description('list the tools this key may use')
          .option('--category <category>', 'only this category (security, analysis, automation, integration, monitoring)')
          .option('--search <text>', 'only tools whose name or description matches')
          .option('--status <status>', 'only this status (ready, beta, deprecated)'),
      ),
      TOOL_VIEW,
    ),
    ['tos tools list', 'tos tools list --category security', 'tos tools list --search scan --json id,description', "tos tools list --jq '.[].id'"],
  ).action((o) =>
    runClient(o, TOOL_VIEW, (c) => {
      const query = new URLSearchParams();
      for (const key of ['category', 'search', 'status'] as const) if (o[key]) query.set(key, o[key]);
      return listed(c, '/v1/tools', query, 'tools', o);
    }),
  );
  examples(addOutputOptions(tools.command('show <tool_id>').description("a tool's inputs, outputs, examples and documentation"), TOOL_VIEW), [
    'tos tools show secret-scan',
    "tos tools show secret-scan --jq '.inputs | keys'",
  ]).action((toolId: string, o) => runClient(o, TOOL_VIEW, async (c) => ({ result: await c.request('GET', `/v1/tools/${id(toolId)}`) })));

  examples(
    addOutputOptions(
      program
        .command('invoke <tool_id>')
        .description('run a tool; --async returns at once, --wait follows it to the end')
        .option('--input <json|@file>', 'inputs as a JSON object, or @file.json')
        .option('--set <key=value>', "one input (repeatable): typed by the tool's input schema, a string unless it says otherwise; key:=json for raw JSON", collectSet)
        .option('--async', 'queue the execution and return its id')
        .option('--wait', 'with --async: follow the execution live until it ends')
        .option('--timeout <seconds>', 'execution timeout, enforced by the service', positiveInt)
        .option('--no-cache', 'bypass the result cache')
        .option('--idempotency-key <key>', 'X-Idempotency-Key, to make retries safe'),
    ),
    ['tos invoke dns-lookup --set name=example.com', "tos invoke dns-lookup --set name=example.com --set types:='[\"MX\"]'", 'tos invoke json-transform --input @input.json', 'tos invoke test-report --set path=reports --async --wait'],
  ).action((toolId: string, o) =>
    runClient(o, {}, async (c) => {
      const inputs = { ...readInput(o.input), ...(await typedInputs(c, toolId, o.set ?? [])) };
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

  examples(
    program
      .command('mcp')
      .description('MCP bridges')
      .command('stdio')
      .description('serve MCP over stdin/stdout, forwarding tools, prompts and resources to TOS_URL/v1/mcp (for Claude Desktop and other stdio hosts)'),
    ['TOS_URL=https://tos.example.com TOS_API_KEY=sk_svc_… tos mcp stdio'],
  ).action(async () => (await import('./mcp-stdio')).serveMcpOverStdio());

  registerExecutionCommands(program);
  registerWorkspaceCommands(program);

  examples(
    program
      .command('listen')
      .description("forward the account's execution events (GET /v1/ws) to a local server, one POST each (like stripe listen)")
      .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://127.0.0.1:4000/webhooks')
      .option('--events <names>', 'only these events, comma-separated (execution.completed, execution.failed, execution.cancelled, execution.input_required, execution.status, execution.progress)', (v) => new Set(v.split(',').map((s) => s.trim()).filter(Boolean)))
      .option('--secret-file <path>', 'sign with the whsec_… secret in this file (or TOS_LISTEN_SECRET) instead of a new one each session'),
    ['tos listen --forward-to http://127.0.0.1:4000/webhooks', 'tos listen --forward-to http://127.0.0.1:4000/webhooks --events execution.completed,execution.failed', 'tos listen --forward-to http://127.0.0.1:4000/webhooks --secret-file .tos-listen-secret'],
  ).action(async (o: { forwardTo: string; events?: Set<string>; secretFile?: string }) => {
    try {
      // Loaded here, as `mcp stdio` is: other commands never load the WebSocket client.
      const { listen, listenSecret, parseForwardUrl } = await import('./listen');
      const forwardTo = parseForwardUrl(o.forwardTo);
      const { secret, pinned } = listenSecret(o.secretFile);
      process.stderr.write(`Your webhook signing secret is ${secret}${pinned ? '' : ' (new for this session; pin one with --secret-file or TOS_LISTEN_SECRET)'}\n`);
      await listen(connectionFromEnv(), { forwardTo, events: o.events ?? null, secret });
    } catch (err) {
      if (!(err instanceof ClientError)) throw err;
      printClientError(err, false);
    }
  });

  examples(addOutputOptions(program.command('usage').description("this key's requests this minute and the account's tool calls this month"), USAGE_VIEW), [
    'tos usage',
    "tos usage --jq '.month.used'",
  ]).action((o) => runClient(o, USAGE_VIEW, async (c) => ({ result: await c.request('GET', '/v1/usage') })));
}

function registerExecutionCommands(program: Command): void {
  const executions = program.command('executions').description('list, inspect, cancel and follow executions');
  examples(
    addOutputOptions(
      addListOptions(
        executions
          .command('list')
          .description('executions of this account, newest first')
          .option('--status <status>', 'only this status (queued, running, input_required, success, error, cancelled)')
          .option('--tool-id <tool_id>', 'only this tool'),
      ),
      EXECUTION_VIEW,
    ),
    ['tos executions list', 'tos executions list --status error --tool-id secret-scan', 'tos executions list --paginate --json id,status'],
  ).action((o) =>
    runClient(o, EXECUTION_VIEW, (c) => {
      const query = new URLSearchParams();
      if (o.status) query.set('status', o.status);
      if (o.toolId) query.set('tool_id', o.toolId);
      return listed(c, '/v1/executions', query, 'executions', o, true);
    }),
  );
  examples(addOutputOptions(executions.command('show <execution_id>').description('one execution: status, input, result or error'), EXECUTION_VIEW), [
    'tos executions show exec_…',
    "tos executions show exec_… --jq '.result'",
  ]).action((executionId: string, o) => runClient(o, EXECUTION_VIEW, async (c) => ({ result: await c.request('GET', `/v1/executions/${id(executionId)}`) })));
  examples(addOutputOptions(executions.command('cancel <execution_id>').description('cancel a queued or running execution')), ['tos executions cancel exec_…']).action(
    (executionId: string, o) => runClient(o, {}, async (c) => ({ result: await c.request('DELETE', `/v1/executions/${id(executionId)}`) })),
  );
  examples(
    addOutputOptions(
      executions
        .command('follow <execution_id>')
        .description('show live progress until the execution ends (exit code per its outcome)')
        .option('--timeout <seconds>', 'stop following after this long', positiveInt),
      EXECUTION_VIEW,
    ),
    ['tos executions follow exec_…', 'tos executions follow exec_… --timeout 60'],
  ).action((executionId: string, o) =>
    runClient(o, EXECUTION_VIEW, async (c) => {
      const final = await followExecution(c, executionId, o.timeout);
      return { result: final, exitCode: exitCodeFor(final) };
    }),
  );
}

function registerWorkspaceCommands(program: Command): void {
  const workspaces = program.command('workspaces').description('source trees uploaded for code tools to read (workspace: "ws_…")');
  examples(addOutputOptions(addListOptions(workspaces.command('list').description("this account's live workspaces")), WORKSPACE_VIEW), [
    'tos workspaces list',
    "tos workspaces list --jq '.[].id'",
  ]).action((o) => runClient(o, WORKSPACE_VIEW, (c) => listed(c, '/v1/workspaces', new URLSearchParams(), 'workspaces', o)));
  examples(
    addOutputOptions(
      workspaces
        .command('upload [archive]')
        .description('upload a .tar.gz or .zip of a source tree, or clone a repository with --git-url')
        .option('--git-url <url>', 'shallow-clone this http(s) repository instead')
        .option('--ref <ref>', 'with --git-url: branch or tag'),
      WORKSPACE_VIEW,
    ),
    ['git archive --format=tar.gz -o src.tar.gz HEAD && tos workspaces upload src.tar.gz', 'tos workspaces upload --git-url https://git.example.com/acme/app.git --ref main'],
  ).action((archive: string | undefined, o) =>
    runClient(o, WORKSPACE_VIEW, async (c) => {
      if (!archive === !o.gitUrl) throw new ClientError('USAGE', 'name an archive or --git-url (one of them)', 'tos workspaces upload src.tar.gz', EXIT.usage);
      if (o.gitUrl) return { result: await c.request('POST', '/v1/workspaces', { body: { git_url: o.gitUrl, ref: o.ref } }) };
      const bytes = readFileSync(archive!);
      const type = archive!.endsWith('.zip') ? 'application/zip' : 'application/gzip';
      return { result: await c.request('POST', '/v1/workspaces', { raw: bytes, headers: { 'content-type': type } }) };
    }),
  );
  examples(addOutputOptions(workspaces.command('show <workspace_id>').description('one workspace: files, bytes, digest, expiry'), WORKSPACE_VIEW), [
    'tos workspaces show ws_…',
  ]).action((workspaceId: string, o) => runClient(o, WORKSPACE_VIEW, async (c) => ({ result: await c.request('GET', `/v1/workspaces/${id(workspaceId)}`) })));
  examples(addOutputOptions(workspaces.command('delete <workspace_id>').description('delete a workspace now (it would expire anyway)')), ['tos workspaces delete ws_…']).action(
    (workspaceId: string, o) =>
      runClient(o, {}, async (c) => {
        await c.request('DELETE', `/v1/workspaces/${id(workspaceId)}`);
        return { result: { deleted: workspaceId } };
      }),
  );
}
