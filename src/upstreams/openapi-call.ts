import { ToolError, type ToolContext } from '../tools/sdk';
import { parseRetryAfter } from '../tools/sdk/tool-error';
import type { HttpOperation, UpstreamAuth } from './upstream.entity';
import { problemParameter } from './problem-parameter';

/** An operation's answer larger than this is refused, not cut (a cut JSON document is not JSON). */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json\b/i;

export interface OperationTarget {
  upstream: string;
  baseUrl: string;
  auth: UpstreamAuth;
  timeoutMs: number;
}

/** `.` and `..` stay dot segments after encodeURIComponent (it leaves `.` as it is), so they cannot be values. */
const DOT_SEGMENT = /^\.{1,2}$/;

function inputError(parameter: string, expected: string, message: string): ToolError {
  return new ToolError(message, { code: 'INVALID_INPUT', details: { parameter, expected } });
}

/** A scalar as a URL or header value; objects and arrays of them as JSON. */
function text(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/**
 * The operation's URL: the base URL's path, then the operation's path with each path parameter
 * percent-encoded as one segment, then the query. The result is checked to stay under the base
 * path at the base origin, so no value can address anything else of the host.
 */
export function operationUrl(baseUrl: string, operation: HttpOperation, input: Record<string, unknown>): URL {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const value = text(input[name] ?? '');
    if (value === '' || DOT_SEGMENT.test(value)) throw inputError(name, 'a non-empty value other than "." and ".."', `Parameter '${name}' cannot be '${value}': it would not name one path segment`);
    return encodeURIComponent(value);
  });
  const url = new URL(`${base.origin}${basePath}${path.startsWith('/') ? path : `/${path}`}`);
  for (const { name, in: place } of operation.parameters) {
    if (place !== 'query' || input[name] === undefined || input[name] === null) continue;
    for (const item of Array.isArray(input[name]) ? (input[name] as unknown[]) : [input[name]]) url.searchParams.append(name, text(item));
  }
  if (url.origin !== base.origin || !`${url.pathname}/`.startsWith(`${basePath}/`)) throw inputError('path', 'values inside the base path', 'The call would leave the upstream base URL');
  return url;
}

async function requestHeaders(operation: HttpOperation, input: Record<string, unknown>, auth: UpstreamAuth, ctx: ToolContext): Promise<Record<string, string>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const { name, in: place } of operation.parameters) {
    if (place !== 'header' || input[name] === undefined || input[name] === null) continue;
    const value = text(input[name]);
    if (/[^\t\x20-\x7e]/.test(value)) throw inputError(name, 'printable ASCII (it is sent as a header)', `Parameter '${name}' can hold only printable ASCII: it is sent as a header`);
    headers[name.toLowerCase()] = value;
  }
  if (operation.body && input.body !== undefined) headers['content-type'] = 'application/json';
  if ('bearer_secret_name' in auth) headers.authorization = `Bearer ${await ctx.secrets.get(auth.bearer_secret_name)}`;
  if ('api_key_header' in auth) headers[auth.api_key_header.toLowerCase()] = await ctx.secrets.get(auth.api_key_secret_name);
  return headers;
}

/** The answer's bytes, refused past MAX_ANSWER_BYTES. */
async function answerText(response: Response, upstream: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  const tooLarge = () => new ToolError(`Upstream '${upstream}' answered more than ${MAX_ANSWER_BYTES} bytes`, { details: { upstream: { service: upstream, status: response.status } } });
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_ANSWER_BYTES) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parsedJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** A 4xx's message: the problem's own words (RFC 9457 `detail`/`title`, or the common `message`/`error`), else the status. */
function problemText(problem: unknown, status: number): string {
  const record = (problem ?? {}) as Record<string, unknown>;
  const words = [record.detail, record.message, record.title, record.error].find((value) => typeof value === 'string' && value.length > 0) as string | undefined;
  return words ? words.slice(0, 500) : `HTTP ${status}`;
}

/** A non-2xx answer as our envelope's error (docs/upstreams.md#openapi-operations). */
function failure(target: OperationTarget, operation: HttpOperation, response: Response, body: string): ToolError {
  const { status } = response;
  const details = { upstream: { service: target.upstream, status } };
  if (status >= 300 && status < 400) {
    return new ToolError(`Upstream '${target.upstream}' answered a redirect (HTTP ${status}), which is not followed`, { details, suggestion: 'Register the upstream with the base URL it redirects to' });
  }
  if (status === 429 || status >= 500) {
    const retryAfter = parseRetryAfter(response.headers.get('retry-after') ?? undefined);
    return new ToolError(`Upstream '${target.upstream}' answered HTTP ${status}${status === 429 ? ' (too many requests)' : ''}`, { retryable: true, retryAfter, details });
  }
  const problem = parsedJson(body);
  if (status === 401 || status === 403) {
    return new ToolError(`Upstream '${target.upstream}' refused the service's credentials (HTTP ${status}): ${problemText(problem, status)}`, {
      details: { ...details, reason: 'upstream_auth' },
      suggestion: 'Check the upstream registration’s auth and the secret it names (PUT /v1/secrets/<name>)',
    });
  }
  const parameter = problemParameter(problem, operation);
  return new ToolError(`Upstream '${target.upstream}' refused the input (HTTP ${status})${parameter ? ` at parameter '${parameter}'` : ''}: ${problemText(problem, status)}`, {
    code: 'INVALID_INPUT',
    details: { ...details, ...(parameter && { parameter }) },
  });
}

/**
 * One call of an OpenAPI operation, inside an execution: through ctx.http.fetch (the egress
 * policy, the execution's signal: cancel aborts the request), under the upstream's timeout, no
 * redirect followed, the answer bounded; a 2xx JSON answer is the result, anything else the
 * envelope's error.
 */
export async function callOperation(target: OperationTarget, operation: HttpOperation, input: Record<string, unknown>, ctx: ToolContext): Promise<Record<string, unknown>> {
  const url = operationUrl(target.baseUrl, operation, input);
  const headers = await requestHeaders(operation, input, target.auth, ctx);
  const response = await ctx.http.fetch(url, {
    method: operation.method,
    headers,
    redirect: 'manual',
    ...(operation.body && input.body !== undefined && { body: JSON.stringify(input.body) }),
    signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(target.timeoutMs)]),
  });
  const body = await answerText(response, target.upstream);
  if (response.status < 200 || response.status >= 300) throw failure(target, operation, response, body);
  const type = response.headers.get('content-type') ?? '';
  if (body.trim() === '') return operation.wrapped ? { body: null } : {};
  const value = JSON_MEDIA.test(type) ? parsedJson(body) : undefined;
  if (value === undefined) throw new ToolError(`Upstream '${target.upstream}' answered ${type || 'an unnamed content type'}, not JSON`, { details: { upstream: { service: target.upstream, status: response.status } } });
  return operation.wrapped ? { body: value } : (value as Record<string, unknown>);
}
