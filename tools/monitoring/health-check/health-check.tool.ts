import { boundedRegexTest, requestHeadersInput, compileRegex, Tool, ToolError, type HttpResponse, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type HealthCheckInput = ToolInput<typeof definition>;

type HealthCheckOutput = ToolOutput<typeof definition>;
type TlsSummary = NonNullable<HealthCheckOutput['tls']>;

/** The body a match reads: health pages are small, and a regex runs over at most this much. */
const MATCHED_BODY_BYTES = 256 * 1024;
const DAY_MS = 86_400_000;

const definition = defineTool({
  id: 'health-check',
  name: 'Health Check',
  category: 'monitoring',
  description:
    'Checks an HTTP(S) endpoint or a TCP port: status (expected or any 2xx), latency, an optional body match (substring or regex), redirects followed or not, and the TLS certificate\'s days left for HTTPS. A target that is down, refuses, times out or answers wrong is a result (healthy: false with the reason), not an error.',
  version: '1.0.0',
  effects: 'read',
  idempotent: true,
  open_world: true,
  timeout: 60,
  rate_limit: 120,
  input: {
    type: 'object',
    properties: {
      target: {
        type: 'string',
        maxLength: 2048,
        pattern: '^(https?|tcp)://',
        description: 'What to check: an http(s):// URL, or tcp://host:port for a TCP connect check.',
      },
      method: { type: 'string', enum: ['GET', 'HEAD'], default: 'GET', description: 'HTTP method (HTTP targets).' },
      expected_status: { type: 'integer', minimum: 100, maximum: 599, description: 'The status that counts as healthy; any 2xx when omitted (HTTP targets).' },
      body_match: { type: 'string', minLength: 1, maxLength: 512, description: 'Text (or a regular expression, see body_match_type) the body must contain (HTTP targets; first 256 KiB).' },
      body_match_type: { type: 'string', enum: ['substring', 'regex'], default: 'substring', description: 'How body_match is read.' },
      follow_redirects: { type: 'boolean', default: true, description: 'Follow up to 5 redirects (each target checked by the egress policy again); false reports the 3xx itself.' },
      headers: requestHeadersInput('Extra request headers (an Authorization for a protected health page); never logged.'),
      timeout_ms: { type: 'integer', minimum: 100, maximum: 30_000, default: 5000, description: 'How long the check may take before it counts as unhealthy.' },
    },
    required: ['target'],
  },
  output: {
    type: 'object',
    properties: {
      healthy: { type: 'boolean', description: 'True when the target answered as expected.' },
      protocol: { type: 'string', enum: ['http', 'https', 'tcp'], description: 'How the target was checked.' },
      status: { type: ['integer', 'null'], description: 'HTTP status of the final answer; null for TCP or when there was none.' },
      status_matched: { type: ['boolean', 'null'], description: 'Whether the status was the expected one; null for TCP or when there was no answer.' },
      body_matched: { type: ['boolean', 'null'], description: 'Whether the body matched body_match; null when no match was asked.' },
      redirects: { type: 'integer', description: 'Redirects followed.' },
      latency_ms: { type: 'number', description: 'Time to the full answer (HTTP) or to the established connection (TCP).' },
      tls: {
        type: ['object', 'null'],
        description: "The HTTPS server's certificate: days_left, valid_to, subject and issuer common names; null otherwise.",
        properties: {
          days_left: { type: 'integer' },
          valid_to: { type: 'string' },
          subject: { type: ['string', 'null'] },
          issuer: { type: ['string', 'null'] },
        },
      },
      reason: { type: ['string', 'null'], description: 'Why the target is unhealthy; null when healthy.' },
    },
    required: ['healthy', 'protocol', 'status', 'status_matched', 'body_matched', 'redirects', 'latency_ms', 'tls', 'reason'],
  },
  examples: [
    {
      name: 'An HTTPS health page with a body check',
      input: { target: 'https://status.example.test:8443/healthz', body_match: '"status":"ok"' },
      output: {
        healthy: true,
        protocol: 'https',
        status: 200,
        status_matched: true,
        body_matched: true,
        redirects: 0,
        latency_ms: 4.2,
        tls: { days_left: 29, valid_to: '2026-12-22T18:41:00.000Z', subject: 'status.example.test', issuer: 'Example World Test CA' },
        reason: null,
      },
      varies: ['latency_ms', 'tls.valid_to'],
    },
    {
      name: 'A moved page, redirect followed',
      input: { target: 'http://status.example.test:8080/old-health', expected_status: 200 },
      output: { healthy: true, protocol: 'http', status: 200, status_matched: true, body_matched: null, redirects: 1, latency_ms: 2.1, tls: null, reason: null },
      varies: ['latency_ms'],
    },
    {
      name: 'A TCP port',
      input: { target: 'tcp://status.example.test:8080' },
      output: { healthy: true, protocol: 'tcp', status: null, status_matched: null, body_matched: null, redirects: 0, latency_ms: 0.6, tls: null, reason: null },
      varies: ['latency_ms'],
    },
  ],
});

@Tool(definition)
export class HealthCheckTool implements ToolHandler<typeof definition> {
  async execute(input: HealthCheckInput, ctx: ToolContext<typeof definition>): Promise<HealthCheckOutput> {
    const pattern = input.body_match !== undefined && input.body_match_type === 'regex' ? compileRegex(input.body_match, 'body_match') : undefined;
    return input.target.startsWith('tcp://') ? this.checkTcp(input, ctx) : this.checkHttp(input, ctx, pattern);
  }

  private async checkHttp(input: HealthCheckInput, ctx: ToolContext, pattern: RegExp | undefined): Promise<HealthCheckOutput> {
    const protocol = input.target.startsWith('https:') ? 'https' : 'http';
    const started = performance.now();
    let response: HttpResponse;
    try {
      response = await ctx.http.request(input.target, {
        method: input.method,
        headers: input.headers,
        timeoutMs: input.timeout_ms,
        maxResponseBytes: MATCHED_BODY_BYTES,
        redirect: input.follow_redirects ? 'follow' : 'manual',
        parameter: 'target',
      });
    } catch (err) {
      return unreachable(protocol, err, performance.now() - started);
    }
    const statusMatched = input.expected_status === undefined ? response.status >= 200 && response.status < 300 : response.status === input.expected_status;
    const bodyMatched = input.body_match === undefined ? null : pattern ? boundedRegexTest(pattern, response.text(), 'body_match') : response.text().includes(input.body_match);
    const reasons = [
      !statusMatched && `status ${response.status}, expected ${input.expected_status ?? 'a 2xx'}`,
      bodyMatched === false && 'the body did not match body_match',
    ].filter(Boolean);
    return {
      healthy: reasons.length === 0,
      protocol,
      status: response.status,
      status_matched: statusMatched,
      body_matched: bodyMatched,
      redirects: response.redirects,
      latency_ms: response.timing.total_ms,
      tls: response.certificate ? tlsSummary(response.certificate) : null,
      reason: reasons.length ? reasons.join('; ') : null,
    };
  }

  private async checkTcp(input: HealthCheckInput, ctx: ToolContext): Promise<HealthCheckOutput> {
    let endpoint: URL;
    try {
      endpoint = new URL(input.target);
    } catch {
      throw ToolError.invalidInput('target', 'tcp://host:port', input.target);
    }
    if (!endpoint.port || endpoint.pathname.replace(/^\/$/, '') || endpoint.search) throw ToolError.invalidInput('target', 'tcp://host:port (with a port, nothing after it)', input.target);
    const started = performance.now();
    try {
      const socket = await ctx.net.connect({ host: endpoint.hostname, port: Number(endpoint.port), timeoutMs: input.timeout_ms, parameter: 'target' });
      const latency = performance.now() - started;
      socket.destroy();
      return { ...noAnswer('tcp'), healthy: true, latency_ms: round(latency), reason: null };
    } catch (err) {
      return unreachable('tcp', err, performance.now() - started);
    }
  }
}

function noAnswer(protocol: HealthCheckOutput['protocol']): HealthCheckOutput {
  return { healthy: false, protocol, status: null, status_matched: null, body_matched: null, redirects: 0, latency_ms: 0, tls: null, reason: null };
}

/**
 * A target that could not be reached is the check's finding, not a failure of the call; a refused
 * address (INVALID_INPUT) and a cancel still end the call.
 */
function unreachable(protocol: HealthCheckOutput['protocol'], err: unknown, elapsedMs: number): HealthCheckOutput {
  if (!(err instanceof ToolError) || !err.retryable) throw err;
  return { ...noAnswer(protocol), latency_ms: round(elapsedMs), reason: err.message };
}

function tlsSummary(certificate: NonNullable<HttpResponse['certificate']>): TlsSummary {
  return {
    days_left: Math.floor((Date.parse(certificate.valid_to) - Date.now()) / DAY_MS),
    valid_to: certificate.valid_to,
    subject: certificate.subject ?? null,
    issuer: certificate.issuer ?? null,
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
