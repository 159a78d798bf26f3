import { exactlyOneOf, notBoth, requestHeadersInput, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type FunctionInvokeInput = ToolInput<typeof definition>;

type FunctionInvokeOutput = ToolOutput<typeof definition>;

/** Response headers a caller may see: the ones gateways use to describe a call, not whatever a function leaks. */
const SHOWN_HEADERS = ['content-type', 'content-length', 'x-call-id', 'x-duration-seconds', 'x-start-time', 'x-amzn-requestid', 'x-request-id', 'ce-id', 'ce-type', 'ce-source'];

const definition = defineTool({
  id: 'function-invoke',
  name: 'Function Invoke',
  category: 'automation',
  status: 'beta',
  description:
    "Calls a serverless function over HTTP with a JSON or text payload: through the gateway at FUNCTIONS_GATEWAY_URL by name (OpenFaaS path routing /function/<name>, or Knative-style host routing <name>.<namespace>.<FUNCTIONS_DOMAIN>), or at a full function URL (a Lambda function URL). Returns the status, the gateway's call headers, the body (capped) and the duration. Beta: async invocation and per-provider auth signing (AWS SigV4) are not there yet.",
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 90,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      function: { type: 'string', pattern: '^[a-z0-9]([a-z0-9-_.]{0,61}[a-z0-9])?$', maxLength: 63, description: 'The function name at the gateway; give this or url.' },
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'A full function URL instead of a name.' },
      routing: { type: 'string', enum: ['path', 'host'], default: 'path', description: 'How the gateway finds a named function: path (OpenFaaS) or host (Knative).' },
      namespace: { type: 'string', pattern: '^[a-z0-9-]{1,63}$', maxLength: 63, default: 'default', description: 'Knative namespace (host routing).' },
      method: { type: 'string', enum: ['POST', 'GET', 'PUT'], default: 'POST', description: 'HTTP method.' },
      payload: { description: 'A JSON payload (sent as application/json); give this or payload_text, or neither.' },
      payload_text: { type: 'string', maxLength: 1_000_000, description: 'A text payload (sent as text/plain).' },
      headers: requestHeadersInput('Extra request headers (a function key, a tenant header); never logged.'),
      timeout_ms: { type: 'integer', minimum: 100, maximum: 60_000, default: 30_000, description: 'How long the call may take.' },
      max_response_bytes: { type: 'integer', minimum: 1024, maximum: 5 * 1024 * 1024, default: 1024 * 1024, description: 'The body is cut at this many bytes (truncated: true).' },
    },
    ...exactlyOneOf('function', 'url'),
    ...notBoth('payload', 'payload_text'),
  },
  output: {
    type: 'object',
    properties: {
      status: { type: 'integer', description: "The function's HTTP status (2xx–4xx; 5xx and an unknown function are errors)." },
      headers: { type: 'object', description: 'The call headers (content type, call id, duration) of the answer.' },
      body: { type: 'string', description: 'The body as text, up to max_response_bytes.' },
      body_json: { description: 'The body parsed, when it is complete JSON; else null.' },
      truncated: { type: 'boolean', description: 'True when the body was cut.' },
      duration_ms: { type: 'number', description: 'Wall time of the call.' },
    },
    required: ['status', 'headers', 'body', 'body_json', 'truncated', 'duration_ms'],
  },
  config: {
    FUNCTIONS_GATEWAY_URL: { type: 'url', default: 'http://127.0.0.1:8080', description: 'The function gateway (OpenFaaS gateway, Knative ingress).' },
    FUNCTIONS_DOMAIN: { type: 'string', default: 'example.com', description: 'The Knative domain of host routing.' },
  },
  examples: [
    {
      name: 'Call an OpenFaaS function with a JSON payload',
      input: { function: 'echo', payload: { invoice: 'INV-1042', amount: 120.5 } },
      output: {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-call-id': 'call-0001', 'x-duration-seconds': '0.001' },
        body: '{"invoice":"INV-1042","amount":120.5}',
        body_json: { invoice: 'INV-1042', amount: 120.5 },
        truncated: false,
        duration_ms: 6,
      },
      varies: ['duration_ms'],
    },
  ],
});

@Tool(definition)
export class FunctionInvokeTool implements ToolHandler<typeof definition> {
  async execute(input: FunctionInvokeInput, ctx: ToolContext<typeof definition>): Promise<FunctionInvokeOutput> {
    const target = targetOf(input, ctx);
    const text = input.payload_text !== undefined && input.payload === undefined;
    const response = await ctx.http.request(target.url, {
      method: input.method,
      headers: { ...input.headers, ...target.headers, ...(text && { 'content-type': 'text/plain; charset=utf-8' }) },
      ...(input.payload !== undefined ? { json: input.payload } : text ? { body: input.payload_text } : {}),
      timeoutMs: input.timeout_ms,
      maxResponseBytes: input.max_response_bytes,
      redirect: 'manual',
      parameter: target.parameter,
    });
    const name = input.function ?? new URL(target.url).hostname;
    if (response.status === 404 && input.function !== undefined) {
      throw new ToolError(`The gateway has no function '${input.function}'`, { code: 'INVALID_INPUT', details: { parameter: 'function', received: input.function, upstream: { service: 'functions', status: 404 } } });
    }
    if (response.status >= 500) throw ToolError.fromResponse('functions', response, `Function '${name}' failed: HTTP ${response.status} ${response.text().slice(0, 200)}`.trim());
    const body = response.text();
    return {
      status: response.status,
      headers: Object.fromEntries(SHOWN_HEADERS.filter((header) => response.headers[header] !== undefined).map((header) => [header, response.headers[header]])),
      body,
      body_json: response.truncated ? null : parseJson(body, response.headers['content-type']),
      truncated: response.truncated,
      duration_ms: response.timing.total_ms,
    };
  }
}

function targetOf(input: FunctionInvokeInput, ctx: ToolContext): { url: string; headers: Record<string, string>; parameter: string } {
  if (input.url !== undefined) return { url: input.url, headers: {}, parameter: 'url' };
  const gateway = String(ctx.config.FUNCTIONS_GATEWAY_URL).replace(/\/+$/, '');
  if (input.routing === 'host') return { url: `${gateway}/`, headers: { host: `${input.function}.${input.namespace}.${ctx.config.FUNCTIONS_DOMAIN}` }, parameter: 'FUNCTIONS_GATEWAY_URL' };
  return { url: `${gateway}/function/${input.function}`, headers: {}, parameter: 'FUNCTIONS_GATEWAY_URL' };
}

function parseJson(body: string, contentType = ''): unknown {
  if (!/json/i.test(contentType)) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}
