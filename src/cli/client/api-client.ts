/** The client half of `tos`: HTTP calls to a running service with TOS_URL and TOS_API_KEY. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { configPath, readProfile } from './profiles';
import { RequestSigner } from './request-signer';

/** Exit codes of client commands (documented in docs/cli.md). */
export const EXIT = { ok: 0, error: 1, usage: 2, executionFailed: 3, cancelled: 4, timeout: 5 } as const;

export class ClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly suggestion: string | undefined,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

export interface Connection {
  url: string;
  apiKey: string;
  /** Set for a key that requires signed requests: every request is signed with it. */
  signingSecret?: string;
  /** Where it came from, for `tos auth status`. */
  source: string;
}

/** TOS_URL and TOS_API_KEY (with TOS_SIGNING_SECRET) win; else the profile named by --profile / TOS_PROFILE, or `default`. */
export function connectionFromEnv(env: NodeJS.ProcessEnv = process.env): Connection {
  const profile = env.TOS_URL && env.TOS_API_KEY ? undefined : readProfile(env.TOS_PROFILE || 'default', env);
  const url = env.TOS_URL || profile?.url;
  const apiKey = env.TOS_API_KEY || profile?.api_key;
  if (!url || !apiKey) {
    throw new ClientError('NOT_CONFIGURED', 'no service configured: set TOS_URL and TOS_API_KEY, or save a profile', 'printf %s "$KEY" | tos login --url http://127.0.0.1:3000 [--profile NAME]', EXIT.usage);
  }
  const source = env.TOS_URL && env.TOS_API_KEY ? 'TOS_URL and TOS_API_KEY' : `profile "${env.TOS_PROFILE || 'default'}" (${configPath(env)})${env.TOS_URL || env.TOS_API_KEY ? ' with TOS_URL or TOS_API_KEY over it' : ''}`;
  const signingSecret = (env.TOS_URL && env.TOS_API_KEY ? env.TOS_SIGNING_SECRET : (env.TOS_SIGNING_SECRET ?? profile?.signing_secret)) || undefined;
  return { url: url.replace(/\/+$/, ''), apiKey, ...(signingSecret ? { signingSecret } : {}), source };
}

/**
 * A fetch for transports that make their own requests (the MCP bridge): signs each one as ApiClient
 * does when the connection holds a signing secret. Bodies are strings there (JSON-RPC).
 */
export function signingFetch(connection: Connection): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const signer = connection.signingSecret ? new RequestSigner(connection.signingSecret) : null;
  return async (url, init = {}) => {
    if (!signer) return fetch(url, init);
    if (init.body != null && typeof init.body !== 'string') throw new Error('signingFetch signs string bodies only');
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const signed = await signer.headers({ method: init.method ?? 'GET', pathWithQuery: target.pathname + target.search, body: init.body ?? '' });
    for (const [name, value] of Object.entries(signed)) headers.set(name, value);
    return fetch(url, { ...init, headers });
  };
}

/** The error envelope `{ error: { code, message, suggestion } }` as a ClientError. */
function envelopeError(status: number, body: unknown): ClientError {
  const error = (body as { error?: { code?: string; message?: string; suggestion?: string } } | null)?.error;
  return new ClientError(error?.code ?? `HTTP_${status}`, error?.message ?? `HTTP ${status}`, error?.suggestion);
}

export class ApiClient {
  private readonly signer: RequestSigner | null;

  constructor(private readonly connection: Connection) {
    this.signer = connection.signingSecret ? new RequestSigner(connection.signingSecret) : null;
  }

  /** `body` is sent as JSON; `raw` as it is (an archive), with the content type in `headers`. */
  async request(method: string, path: string, options: { body?: unknown; raw?: Buffer; headers?: Record<string, string> } = {}): Promise<unknown> {
    let response: Response;
    const payload = options.raw ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8'));
    const auth = await this.authHeaders(method, path, payload);
    try {
      response = await fetch(`${this.connection.url}${path}`, {
        method,
        headers: { ...auth, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        body: payload,
      });
    } catch (err) {
      throw new ClientError('CONNECTION_FAILED', `cannot reach ${this.connection.url}: ${(err as Error).cause ?? (err as Error).message}`, 'check TOS_URL and that the service runs');
    }
    const text = await response.text();
    const body = text ? safeJson(text) : null;
    if (!response.ok) throw envelopeError(response.status, body);
    return body;
  }

  /** Streams `/v1/executions/{id}/events` and calls `onEvent` per event until the stream ends. */
  async events(executionId: string, onEvent: (event: string, data: unknown) => void, signal?: AbortSignal): Promise<void> {
    const path = `/v1/executions/${encodeURIComponent(executionId)}/events`;
    const response = await fetch(`${this.connection.url}${path}`, {
      headers: { ...(await this.authHeaders('GET', path)), accept: 'text/event-stream' },
      signal,
    });
    if (!response.ok || !response.body) throw envelopeError(response.status, safeJson(await response.text()));
    const parser = createParser({ onEvent: (message: EventSourceMessage) => onEvent(message.event ?? 'message', safeJson(message.data)) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  }

  /** The bearer key, and for a signing key X-Timestamp and X-Signature over exactly what is sent. */
  private async authHeaders(method: string, path: string, body: Buffer = Buffer.alloc(0)): Promise<Record<string, string>> {
    // The path as the service sees it: a proxy in front (a path in TOS_URL) strips its own prefix.
    const signed = this.signer ? await this.signer.headers({ method, pathWithQuery: path, body }) : {};
    return { authorization: `Bearer ${this.connection.apiKey}`, ...signed };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
