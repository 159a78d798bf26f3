import { createHmac } from 'node:crypto';
import { requestHeadersInput, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type WebhookInput = ToolInput<typeof definition>;
type WebhookOutput = ToolOutput<typeof definition>;

const MAX_RESPONSE_BYTES = 64 * 1024;
const BASE_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;

const definition = defineTool({
  id: 'webhook-trigger',
  name: 'Webhook Trigger',
  category: 'integration',
  description: 'POSTs a JSON payload to a URL, signed (sha256 HMAC and Standard Webhooks headers) when a secret is given; retries 5xx, 429 and network errors with backoff.',
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 120,
  input: {
    type: 'object',
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'The http(s) URL to POST to.' },
      payload: { type: 'object', maxProperties: 200, description: 'The JSON object to send.' },
      secret: { type: 'string', minLength: 8, maxLength: 256, writeOnly: true, description: 'Signing secret given inline.' },
      secret_name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', maxLength: 64, description: 'Name of an account secret to sign with (PUT /v1/secrets/{name}).' },
      headers: requestHeadersInput('Extra request headers (the signature and content-type headers cannot be overridden); never logged.'),
      max_attempts: { type: 'integer', minimum: 1, maximum: 5, default: 3, description: 'Attempts in all, retries included.' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 30_000, default: 10_000, description: 'Timeout of each attempt.' },
    },
    required: ['url', 'payload'],
  },
  output: {
    type: 'object',
    properties: {
      status: { type: 'integer', description: 'HTTP status of the last attempt.' },
      attempts: { type: 'integer', description: 'Attempts made.' },
      delivered: { type: 'boolean', description: 'True when the last answer was 2xx.' },
      response_body: { type: 'string', description: 'Body of the last answer (first 64 KiB).' },
      signed: { type: 'boolean', description: 'Whether the request was signed.' },
      duration_ms: { type: 'number', description: 'Wall time of all attempts.' },
    },
    required: ['status', 'attempts', 'delivered', 'response_body', 'signed', 'duration_ms'],
  },
  examples: [
    {
      name: 'Deliver a signed deploy event',
      input: { url: 'https://hooks.example.test:8443/hooks/deploy', payload: { event: 'deploy', service: 'api', version: '1.4.2' }, secret: 'whsec_ZXhhbXBsZS13b3JsZC1zaWduaW5nLWtleSE=' },
      output: { status: 202, attempts: 1, delivered: true, response_body: '{"accepted":true,"verified":true}', signed: true, duration_ms: 12 },
      varies: ['duration_ms'],
    },
    {
      name: 'Deliver an unsigned event',
      input: { url: 'http://hooks.example.test:8080/hooks/deploy', payload: { event: 'deploy', service: 'api' } },
      output: { status: 202, attempts: 1, delivered: true, response_body: '{"accepted":true,"verified":false}', signed: false, duration_ms: 8 },
      varies: ['duration_ms'],
    },
  ],
});

@Tool(definition)
export class WebhookTriggerTool implements ToolHandler<typeof definition> {
  async execute(input: WebhookInput, ctx: ToolContext<typeof definition>): Promise<WebhookOutput> {
    if (input.secret !== undefined && input.secret_name !== undefined) throw ToolError.invalidInput('secret_name', "only one of 'secret' or 'secret_name'");
    const secret = input.secret ?? (input.secret_name !== undefined ? await ctx.secrets.get(input.secret_name) : undefined);
    const standardKey = secret === undefined ? undefined : standardWebhooksKey(secret, input.secret !== undefined ? 'secret' : 'secret_name');
    const body = JSON.stringify(input.payload);
    // The execution id is the Standard Webhooks `webhook-id`, signed or not: one for every attempt, and for a
    // run of the same execution again, so a receiver can drop what it already has.
    const messageId = ctx.executionId;
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      ctx.progress(Math.round(((attempt - 1) / input.max_attempts) * 100), `attempt ${attempt}`);
      const headers: Record<string, string> = { ...input.headers, 'content-type': 'application/json', 'webhook-id': messageId, ...(secret && standardKey && signatureHeaders(secret, standardKey, messageId, body)) };
      let wait: number;
      try {
        const response = await ctx.http.request(input.url, { method: 'POST', headers, body, timeoutMs: input.timeout_ms, maxResponseBytes: MAX_RESPONSE_BYTES, redirect: 'manual', parameter: 'url' });
        const retryable = response.status >= 500 || response.status === 429;
        if (!retryable || attempt >= input.max_attempts) {
          return {
            status: response.status,
            attempts: attempt,
            delivered: response.status >= 200 && response.status < 300,
            response_body: response.text(),
            signed: secret !== undefined,
            duration_ms: Math.round(performance.now() - started),
          };
        }
        wait = ToolError.fromResponse('webhook', response).retryAfter! * 1000 || backoff(attempt);
      } catch (err) {
        if (!(err instanceof ToolError) || !err.retryable || attempt >= input.max_attempts) throw err;
        wait = backoff(attempt);
      }
      await ctx.sleep(Math.min(wait, MAX_BACKOFF_MS));
    }
  }
}

const STANDARD_SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The Standard Webhooks HMAC key: a `whsec_` secret is that prefix and base64, and its key is the
 * decoded bytes (what the standardwebhooks verifiers decode); any other secret signs with its own
 * bytes (the verifiers' `raw` format). A `whsec_` secret that is not base64 no verifier could check.
 */
function standardWebhooksKey(secret: string, parameter: 'secret' | 'secret_name'): Buffer {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return Buffer.from(secret, 'utf8');
  const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) {
    throw ToolError.invalidInput(parameter, `'${STANDARD_SECRET_PREFIX}' followed by base64 (a Standard Webhooks secret), or a secret without that prefix`);
  }
  return Buffer.from(encoded, 'base64');
}

/**
 * `X-Signature: sha256=<hex>` (HMAC-SHA-256 of the body, keyed by the secret as given) plus the Standard
 * Webhooks timestamp and signature of `id`, signed per attempt.
 */
function signatureHeaders(secret: string, standardKey: Buffer, id: string, body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000).toString();
  const standard = createHmac('sha256', standardKey).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'x-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standard}`,
  };
}

function backoff(attempt: number): number {
  return BASE_BACKOFF_MS * 2 ** (attempt - 1);
}
