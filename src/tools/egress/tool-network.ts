import { promises as dnsPromises } from 'node:dns';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { SERVICE_VERSION } from '../../common/service-version';
import { observeOutbound } from '../../common/probes';
import { fetch as undiciFetch, request as undiciRequest, type Dispatcher } from 'undici';
import type { HttpRequestOptions, HttpResponse, ToolDns, ToolHttp, ToolNet } from '../sdk/context';
import { EgressRefusedError, egressRefusal, networkError } from '../sdk/network-errors';
import { ToolError } from '../sdk/tool-error';
import type { Egress } from './egress';

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = `tool-orchestration-service/${SERVICE_VERSION}`;

/** `scheme://host:port` only: URLs may carry tokens in their path or query, messages must not. */
function originOf(url: URL): string {
  return url.origin;
}

/** ctx.http for one execution: the shared policy dispatcher bound to its signal. */
export function createToolHttp(egress: Egress, signal: AbortSignal): ToolHttp {
  const boundFetch = ((input: Parameters<typeof fetch>[0], init: RequestInit = {}) =>
    undiciFetch(input as never, {
      ...(init as object),
      dispatcher: egress.dispatcher,
      signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal,
    } as never)) as unknown as typeof fetch;

  return {
    fetch: boundFetch,
    dispatcher: egress.dispatcher,
    agents: egress.agents,
    request: (url, options = {}) => httpRequest(egress, signal, url, options),
  };
}

async function httpRequest(egress: Egress, executionSignal: AbortSignal, target: string | URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const parameter = options.parameter ?? 'url';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw ToolError.invalidInput(parameter, 'an absolute http(s) URL', String(target));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ToolError.invalidInput(parameter, 'an http or https URL', url.protocol);
  const signal = options.timeoutMs ? AbortSignal.any([executionSignal, AbortSignal.timeout(options.timeoutMs)]) : executionSignal;
  const dispatcher = options.tls ? egress.agent(options.tls) : egress.dispatcher;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...lowerCased(options.headers) };
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  let method = (options.method ?? 'GET').toUpperCase();
  const started = performance.now();
  try {
    for (let redirects = 0; ; redirects++) {
      if (egress.proxied) await egress.resolve(url.hostname);
      // Each hop is one observed call: with tracing on, a client span and a traceparent header.
      const { response } = await observeOutbound({ method, url }, headers, async () => {
        const answer = await undiciRequest(url, { method: method as Dispatcher.HttpMethod, headers, body, signal, dispatcher, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
        return { status: answer.statusCode, response: answer };
      });
      const ttfb = performance.now() - started;
      const location = response.headers.location;
      if (options.redirect !== 'manual' && REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string') {
        await response.body.dump();
        if (redirects >= MAX_REDIRECTS) throw new ToolError(`Too many redirects (more than ${MAX_REDIRECTS}) from ${originOf(url)}`, { details: { parameter } });
        const next = new URL(location, url);
        if (next.origin !== url.origin) {
          delete headers.authorization;
          delete headers.cookie;
        }
        if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        url = next;
        continue;
      }
      const { bytes, truncated } = await readCapped(response.body, maxBytes);
      const finalUrl = url.toString();
      return {
        status: response.statusCode,
        headers: flatHeaders(response.headers),
        url: finalUrl,
        redirects,
        body: bytes,
        truncated,
        text: () => bytes.toString('utf8'),
        json: <T>() => {
          try {
            return JSON.parse(bytes.toString('utf8')) as T;
          } catch {
            throw new ToolError(`${originOf(url)} did not answer JSON`, { details: { status: response.statusCode } });
          }
        },
        timing: { total_ms: round(performance.now() - started), ttfb_ms: round(ttfb) },
        ...(url.protocol === 'https:' && { certificate: egress.certificates.get(`https://${url.hostname}:${url.port || 443}`) }),
      };
    }
  } catch (err) {
    throw networkError(err, originOf(url), parameter, executionSignal);
  } finally {
    if (dispatcher !== egress.dispatcher) void dispatcher.close();
  }
}

async function readCapped(stream: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size));
      stream.destroy();
      return { bytes: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), truncated: false };
}

function lowerCased(headers: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined).map(([name, v]) => [name.toLowerCase(), Array.isArray(v) ? v.join(', ') : (v as string)]));
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** ctx.net for one execution. */
export function createToolNet(egress: Egress, signal: AbortSignal): ToolNet {
  const resolve = async (host: string, options: { parameter?: string } = {}) => {
    try {
      const { address, family } = await egress.resolve(host);
      return { address, family: family === 6 ? (6 as const) : (4 as const) };
    } catch (err) {
      throw networkError(err, host, options.parameter ?? 'host', signal);
    }
  };
  return {
    trustedCa: egress.trustedCa,
    resolve,
    connect: async ({ host, port, tls: tlsOptions, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, parameter = 'host' }) => {
      const { address } = await resolve(host, { parameter });
      const target = `${host}:${port}`;
      return new Promise<net.Socket>((done, fail) => {
        const extra = { ...(egress.trustedCa && { ca: egress.trustedCa }), ...(typeof tlsOptions === 'object' ? tlsOptions : {}) };
        const socket = tlsOptions
          ? tls.connect({ servername: net.isIP(host) ? undefined : host, ...extra, host: address, port })
          : net.connect({ host: address, port });
        const ready = tlsOptions ? 'secureConnect' : 'connect';
        const timer = setTimeout(() => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
        const onAbort = () => socket.destroy();
        signal.addEventListener('abort', onAbort, { once: true });
        const settle = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        };
        socket.once(ready, () => {
          settle();
          done(socket);
        });
        socket.once('error', (err) => {
          settle();
          fail(networkError(err, target, parameter, signal));
        });
        socket.once('close', () => {
          settle();
          fail(networkError(new Error('closed'), target, parameter, signal));
        });
      });
    },
  };
}

/** ctx.dns for one execution: a Resolver, optionally against a server the policy allows. */
export function createToolDns(egress: Egress): ToolDns {
  return {
    resolver: ({ server, timeoutMs = 5000, parameter = 'server' } = {}) => {
      const resolver = new dnsPromises.Resolver({ timeout: timeoutMs, tries: 2 });
      if (egress.dnsServers.length > 0) resolver.setServers([...egress.dnsServers]);
      if (server) {
        const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(server.trim());
        const host = match?.[1] ?? '';
        if (!net.isIP(host)) throw ToolError.invalidInput(parameter, 'an IP address with an optional port (host:port)', server);
        const label = egress.policy.refusal(host, host);
        if (label) throw egressRefusal(new EgressRefusedError(host, host, label), parameter);
        resolver.setServers([server.trim()]);
      }
      return resolver;
    },
  };
}
