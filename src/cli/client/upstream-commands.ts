/** `tos upstreams …`: MCP servers and OpenAPI operations registered as the account's tools (docs/cli.md#tos-upstreams, docs/upstreams.md). */
import { Command, Option } from 'commander';
import { ClientError, EXIT, type ApiClient } from './api-client';
import { id, positiveInt, runClient } from './commands';
import { examples } from './help';
import { addOutputOptions, type OutputOptions } from './output';
import { UPSTREAM_VIEW } from './views';

const commaList = (value: string): string[] => value.split(',').map((s) => s.trim()).filter(Boolean);

interface AddOptions {
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

/** PATCH the upstream, or one of its tools when --tool names it. */
const toggle = (c: ApiClient, upstreamId: string, tool: string | undefined, on: boolean) =>
  c.request('PATCH', `/v1/upstreams/${id(upstreamId)}`, { body: tool ? { tools_enabled: { [tool]: on } } : { enabled: on } });

export function registerUpstreamCommands(program: Command): void {
  const upstreams = program.command('upstreams').description("MCP servers and OpenAPI operations served as your account's tools, <upstream>.<tool> (needs upstreams:manage)");

  examples(
    addOutputOptions(
      upstreams
        .command('add <name>')
        .description('register an upstream and discover its tools; they are callable at once as <name>.<tool>')
        .option('--url <url>', 'an MCP server over Streamable HTTP')
        .option('--include <tools>', 'MCP: only these of its tools, comma-separated', commaList)
        .option('--exclude <tools>', 'MCP: all of its tools but these, comma-separated', commaList)
        .option('--openapi <spec_url>', "an OpenAPI 3 document's URL (JSON or YAML)")
        .option('--base-url <url>', 'OpenAPI: where its operations are called')
        .option('--operations <ids>', 'OpenAPI: the operations to serve, by operationId or "METHOD /path", comma-separated', commaList)
        .option('--bearer-secret <name>', 'send Authorization: Bearer <the value of this secret of yours>')
        .option('--api-key-header <header>', 'OpenAPI: send this header …')
        .option('--api-key-secret <name>', '… holding the value of this secret of yours')
        .addOption(new Option('--timeout <seconds>', 'longest a call may take (default 30)').argParser(positiveInt)),
      UPSTREAM_VIEW,
    ),
    [
      'tos upstreams add everything --url https://mcp.example.com/mcp --bearer-secret everything-token',
      'tos upstreams add pets --openapi https://api.example.com/openapi.json --base-url https://api.example.com --operations listPets,showPetById',
    ],
  ).action((name: string, o: AddOptions & OutputOptions) => runClient(o, UPSTREAM_VIEW, async (c) => ({ result: await c.request('POST', '/v1/upstreams', { body: registration(name, o) }) })));

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

  examples(addOutputOptions(upstreams.command('rm <upstream_id>').description('remove an upstream: its tools leave the catalogue')), ['tos upstreams rm up_…']).action((upstreamId: string, o) =>
    runClient(o, {}, async (c) => {
      await c.request('DELETE', `/v1/upstreams/${id(upstreamId)}`);
      return { result: { deleted: upstreamId } };
    }),
  );
}
