/**
 * `tos upstreams …`: MCP servers and OpenAPI operations registered as the account's tools
 * (docs/cli.md#tos-upstreams, docs/upstreams.md); with `--account`, the operator's registrations:
 * stdio servers and upstreams shared with every account.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { SECRET_NAME } from '../../secrets/secret-name';
import { operator } from '../operator-commands';
import { ClientError, EXIT, type ApiClient } from './api-client';
import { addListOptions, id, listed, positiveInt, runClient } from './commands';
import { examples } from './help';
import { addOutputOptions, type OutputOptions } from './output';
import { UPSTREAM_AUDIT_VIEW, UPSTREAM_VIEW } from './views';

const commaList = (value: string): string[] => value.split(',').map((s) => s.trim()).filter(Boolean);

interface AddOptions {
  account?: string;
  shared?: boolean;
  stdio?: boolean;
  image?: string;
  allowEgress?: boolean;
  user?: string;
  cwd?: string;
  env?: Record<string, string>;
  url?: string;
  openapi?: string;
  baseUrl?: string;
  operations?: string[];
  include?: string[];
  exclude?: string[];
  bearerSecret?: string;
  apiKeyHeader?: string;
  apiKeySecret?: string;
  timeout?: number;
}

const usage = (message: string, hint: string) => new ClientError('USAGE', message, hint, EXIT.usage);

/** The credential the options name: a bearer token or an API-key header from the account's secrets, else none. */
function authOf(o: AddOptions): Record<string, unknown> {
  if (o.bearerSecret && (o.apiKeyHeader || o.apiKeySecret)) throw usage('--bearer-secret and --api-key-header exclude each other', 'name one credential');
  if (o.bearerSecret) return { bearer_secret_name: o.bearerSecret };
  if (Boolean(o.apiKeyHeader) !== Boolean(o.apiKeySecret)) throw usage('--api-key-header and --api-key-secret go together', 'e.g. --api-key-header x-api-key --api-key-secret pets-key');
  if (o.apiKeyHeader) return { api_key_header: o.apiKeyHeader, api_key_secret_name: o.apiKeySecret };
  return { none: true };
}

/** The registration body: an MCP server (--url) or an OpenAPI document's operations (--openapi, --base-url, --operations). */
function registration(name: string, o: AddOptions): Record<string, unknown> {
  const common = { name, auth: authOf(o), timeout: o.timeout };
  if (Boolean(o.url) === Boolean(o.openapi)) throw usage('give --url (an MCP server) or --openapi (an OpenAPI document), one of them', 'tos upstreams add --help shows both forms');
  if (o.url) {
    if (o.baseUrl || o.operations) throw usage('--base-url and --operations are for --openapi', 'an MCP server lists its own tools: narrow them with --include or --exclude');
    const tools = { include: o.include, exclude: o.exclude };
    return { ...common, transport: 'streamable-http', url: o.url, ...((o.include || o.exclude) && { tools }) };
  }
  if (!o.baseUrl || !o.operations) throw usage('--openapi needs --base-url and --operations', 'e.g. --base-url https://api.example.com/v1 --operations listPets,"GET /pets/{petId}"');
  if (o.include || o.exclude) throw usage('--include and --exclude are for --url', 'choose OpenAPI operations with --operations');
  return { ...common, type: 'openapi', spec_url: o.openapi, base_url: o.baseUrl, operations: o.operations };
}

/** `VARIABLE=SECRET_NAME`, repeatable: a stdio server's environment from the owning account's secrets. */
function envFromSecret(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(value);
  if (!match || !SECRET_NAME.test(match[2])) throw new InvalidArgumentError('VARIABLE=SECRET_NAME');
  return { ...previous, [match[1]]: match[2] };
}

/**
 * An operator registration (--account, docs/upstreams.md#operator-registered-upstreams): a stdio
 * server (--stdio -- <command…>, or --image) or a Streamable HTTP one, --shared with every account.
 */
function operatorRegistration(name: string, command: string[], o: AddOptions): Record<string, unknown> {
  const common = { account: o.account, name, shared: o.shared === true, timeout: o.timeout, ...((o.include || o.exclude) && { tools: { include: o.include, exclude: o.exclude } }) };
  if ([o.stdio, o.image, o.url].filter(Boolean).length !== 1) throw usage('with --account give one of --stdio (then -- and the command), --image or --url', 'tos upstreams add files --account ops --stdio -- npx -y @modelcontextprotocol/server-filesystem /srv/docs');
  if (o.openapi) throw usage('--openapi is an account’s registration (without --account)', 'an operator registers MCP servers: --stdio, --image or --url');
  if (o.url) return { ...common, transport: 'streamable-http', url: o.url, auth: authOf(o) };
  if (o.image) return { ...common, transport: 'stdio', image: o.image, args: command, env_from_secrets: o.env, ...(o.allowEgress && { allow_egress: true }), ...(o.user && { user: o.user }) };
  const [program, ...args] = command;
  if (!program) throw usage('--stdio needs the command after --', 'tos upstreams add files --account ops --stdio -- npx -y @scope/server');
  return { ...common, transport: 'stdio', command: program, args, env_from_secrets: o.env, cwd: o.cwd };
}

/** PATCH the upstream, or one of its tools when --tool names it. */
const toggle = (c: ApiClient, upstreamId: string, tool: string | undefined, on: boolean) =>
  c.request('PATCH', `/v1/upstreams/${id(upstreamId)}`, { body: tool ? { tools_enabled: { [tool]: on } } : { enabled: on } });

export function registerUpstreamCommands(program: Command): void {
  const upstreams = program.command('upstreams').description("MCP servers and OpenAPI operations served as your account's tools, <upstream>.<tool> (needs upstreams:manage)");

  examples(
    addOutputOptions(
      upstreams
        .command('add <name> [command...]')
        .description('register an upstream and discover its tools; they are callable at once as <name>.<tool> (with --account: operator, see --stdio and --shared)')
        .option('--url <url>', 'an MCP server over Streamable HTTP')
        .option('--include <tools>', 'MCP: only these of its tools, comma-separated', commaList)
        .option('--exclude <tools>', 'MCP: all of its tools but these, comma-separated', commaList)
        .option('--openapi <spec_url>', "an OpenAPI 3 document's URL (JSON or YAML)")
        .option('--base-url <url>', 'OpenAPI: where its operations are called')
        .option('--operations <ids>', 'OpenAPI: the operations to serve, by operationId or "METHOD /path", comma-separated', commaList)
        .option('--bearer-secret <name>', 'send Authorization: Bearer <the value of this secret of yours>')
        .option('--api-key-header <header>', 'OpenAPI: send this header …')
        .option('--api-key-secret <name>', '… holding the value of this secret of yours')
        .addOption(new Option('--timeout <seconds>', 'longest a call may take (default 30)').argParser(positiveInt))
        .option('--account <name>', 'operator: register it for this account, whose secrets it uses')
        .option('--shared', "operator: put its tools in every account's catalogue")
        .option('--stdio', 'operator: run the command given after -- as a local stdio server (needs UPSTREAMS_STDIO=true)')
        .option('--image <image>', 'operator: run this container image, confined, as a stdio server on the engine of UPSTREAMS_STDIO_DOCKER_HOST')
        .option('--allow-egress', 'operator, with --image: give the container a network')
        .option('--user <user[:group]>', 'operator, with --image: the user it runs as (default UPSTREAMS_STDIO_CONTAINER_USER)')
        .option('--cwd <dir>', 'operator, with --stdio: absolute folder to run in')
        .option('--env <VARIABLE=SECRET>', "operator, stdio: an environment variable from one of the account's secrets (repeatable)", envFromSecret),
      UPSTREAM_VIEW,
    ),
    [
      'tos upstreams add everything --url https://mcp.example.com/mcp --bearer-secret everything-token',
      'tos upstreams add pets --openapi https://api.example.com/openapi.json --base-url https://api.example.com --operations listPets,showPetById',
      'tos upstreams add files --account ops --shared --stdio -- npx -y @modelcontextprotocol/server-filesystem /srv/docs',
    ],
  ).action((name: string, command: string[], o: AddOptions & OutputOptions) => {
    if (o.account) return operator('upstreams.add', operatorRegistration(name, command, o), UPSTREAM_VIEW, o);
    if (o.stdio || o.image || o.shared || command.length > 0) throw usage('stdio servers and shared upstreams are the operator’s: add --account', 'tos upstreams add files --account ops --stdio -- <command>');
    return runClient(o, UPSTREAM_VIEW, async (c) => ({ result: await c.request('POST', '/v1/upstreams', { body: registration(name, o) }) }));
  });

  examples(addOutputOptions(upstreams.command('list').description("this account's upstreams: where, how many tools, enabled, the last error"), UPSTREAM_VIEW), [
    'tos upstreams list',
    "tos upstreams list --jq '.[].status'",
  ]).action((o) => runClient(o, UPSTREAM_VIEW, async (c) => ({ result: ((await c.request('GET', '/v1/upstreams')) as { upstreams: unknown[] }).upstreams })));

  examples(addOutputOptions(upstreams.command('show <upstream_id>').description('one upstream: its tools (each enabled or not) and status'), UPSTREAM_VIEW), ['tos upstreams show up_…', "tos upstreams show up_… --jq '.tools[].id'"]).action(
    (upstreamId: string, o) => runClient(o, UPSTREAM_VIEW, async (c) => ({ result: await c.request('GET', `/v1/upstreams/${id(upstreamId)}`) })),
  );

  examples(
    addOutputOptions(upstreams.command('test <upstream_id>').description('contact the upstream now and discover its tools again; exits 1 when it cannot be reached'), UPSTREAM_VIEW),
    ['tos upstreams test up_…'],
  ).action((upstreamId: string, o) =>
    runClient(o, UPSTREAM_VIEW, async (c) => {
      const result = (await c.request('POST', `/v1/upstreams/${id(upstreamId)}/refresh`)) as { status: { last_error: string | null } };
      if (result.status.last_error) throw new ClientError('UPSTREAM_UNREACHABLE', result.status.last_error, 'check the URL, its credential (tos secrets list) and the egress policy', EXIT.error);
      return { result };
    }),
  );

  examples(
    addOutputOptions(
      addListOptions(
        upstreams
          .command('audit [upstream_id]')
          .description('who registered, changed and called what: the audit log of your upstreams (or of one, kept after its deletion), newest first')
          .option('--action <action>', 'only this action (upstream.created, upstream.updated, upstream.deleted, upstream.enabled, upstream.disabled, upstream.tool_enabled, upstream.tool_disabled, upstream.called)')
          .option('--since <time>', 'only events at or after this ISO 8601 time')
          .option('--until <time>', 'only events at or before this ISO 8601 time')
          .option('--operator', 'operator: the operator-wide (shared) upstreams\' registrations and changes, the newest --limit (at most 100)')
          .option('--account <name>', 'operator: that account\'s events instead'),
      ),
      UPSTREAM_AUDIT_VIEW,
    ),
    ['tos upstreams audit', 'tos upstreams audit up_… --action upstream.called --limit 20', "tos upstreams audit --since 2026-11-01T00:00:00Z --jq '.[].actor'", 'tos upstreams audit --operator'],
  ).action((upstreamId: string | undefined, o) => {
    const filter = Object.fromEntries((['action', 'since', 'until'] as const).filter((key) => o[key]).map((key) => [key, o[key]]));
    if (o.operator || o.account) return operator('upstreams.audit', { ...filter, ...(o.account && { account: o.account }), ...(upstreamId && { upstream: upstreamId }), ...(o.limit && { limit: o.limit }) }, UPSTREAM_AUDIT_VIEW, o);
    return runClient(o, UPSTREAM_AUDIT_VIEW, (c) => listed(c, upstreamId ? `/v1/upstreams/${id(upstreamId)}/audit` : '/v1/upstreams/audit', new URLSearchParams(filter), 'events', o));
  });

  for (const [verb, on] of [['enable', true], ['disable', false]] as const) {
    examples(
      addOutputOptions(
        upstreams
          .command(`${verb} <upstream_id>`)
          .description(on ? 'serve its tools again (or one with --tool)' : 'take every tool of it out of the catalogue (or one with --tool)')
          .option('--tool <name>', "one of its tools, by the upstream's own name"),
        UPSTREAM_VIEW,
      ),
      [`tos upstreams ${verb} up_…`, `tos upstreams ${verb} up_… --tool echo`],
    ).action((upstreamId: string, o) => runClient(o, UPSTREAM_VIEW, async (c) => ({ result: await toggle(c, upstreamId, o.tool, on) })));
  }

  examples(
    addOutputOptions(
      upstreams
        .command('rm <upstream>')
        .description('remove an upstream by id: its tools leave the catalogue (with --account: operator, by name, its processes stop)')
        .option('--account <name>', 'operator: the owning account; <upstream> is then its name'),
    ),
    ['tos upstreams rm up_…', 'tos upstreams rm files --account ops'],
  ).action((upstream: string, o) =>
    o.account
      ? operator('upstreams.remove', { account: o.account, name: upstream }, {}, o)
      : runClient(o, {}, async (c) => {
          await c.request('DELETE', `/v1/upstreams/${id(upstream)}`);
          return { result: { deleted: upstream } };
        }),
  );
}
