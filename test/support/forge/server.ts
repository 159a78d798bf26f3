/**
 * A loopback forge speaking GitHub's REST shapes, for the forge tools' specs and the example
 * world (no GitHub is reachable and no GitHub-compatible forge is packaged for Debian).
 *
 * It serves the operations in openapi/extract.ts under an optional path prefix (`/api/v3`, as a
 * GitHub Enterprise Server does), with token auth, per-credential primary rate limits and their
 * headers, ETags and 304s that cost no budget, `Link` pagination, and switches for faults
 * (statuses, secondary limits, dropped connections) and slow answers. Every answer it gives, and
 * every query and body it receives, is checked against GitHub's published description; problems
 * are collected in `openapi.violations` for the specs to assert empty.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ForgeHttpError, HANDLERS, type OperationOptions, type OperationReply } from './handlers';
import { ForgeModel, type ForgeUser } from './model';
import { GithubDescription } from './openapi/github-description';

export interface FakeForgeOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** REST base path: '' like api.github.com, '/api/v3' like an Enterprise Server. */
  pathPrefix?: string;
  /** Token → login of its user (the user is created when missing). */
  tokens?: Record<string, string>;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string; key: string };
  /** Check answers and requests against GitHub's description (default true). */
  checkOpenApi?: boolean;
  dispatchReturnsRunDetails?: boolean;
  runCreationDelayMs?: number;
  /** Requests per hour of one token (GitHub: 5000) and of an anonymous client (GitHub: 60). */
  rateLimit?: { authenticated: number; anonymous: number };
}

export interface Fault {
  /** Only this operation (GitHub operationId); any when omitted. */
  operationId?: string;
  /** Answer this status with GitHub's error body… */
  status?: number;
  message?: string;
  headers?: Record<string, string>;
  /** …or drop the connection without an answer. */
  destroy?: boolean;
  /** How many requests it hits (default 1). */
  times?: number;
}

export interface RecordedRequest {
  method: string;
  /** Path below the REST base, with its query. */
  path: string;
  operationId: string | null;
  status: number;
  authenticated: boolean;
  conditional: boolean;
  /** The client went away before the answer (cancelled). */
  abandoned: boolean;
}

interface Budget {
  limit: number;
  used: number;
  /** Unix seconds. */
  reset: number;
}

const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;
const RATE_WINDOW_SECONDS = 3600;
const DOCS = 'https://docs.github.com';
const SECONDARY_LIMIT_MESSAGE = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  operationId: string;
}

export class FakeForge {
  readonly model = new ForgeModel();
  readonly requests: RecordedRequest[] = [];
  /** Answers and requests checked against the description, and what did not fit. */
  readonly openapi = { responses: 0, requests: 0, violations: [] as string[] };
  private readonly description = GithubDescription.load();
  private readonly routes: Route[];
  private readonly faults: Fault[] = [];
  private readonly delays: Array<{ operationId?: string; ms: number }> = [];
  private readonly budgets = new Map<string, Budget>();
  private readonly tokens = new Map<string, ForgeUser>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server!: Server;
  private origin = '';

  private constructor(private readonly options: FakeForgeOptions) {
    this.routes = this.description.operationIds.map((operationId) => {
      const { method, path } = this.description.operation(operationId);
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      return { method: method.toUpperCase(), operationId, names, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '([^/]+)')}$`) };
    });
    for (const [token, login] of Object.entries(options.tokens ?? {})) this.tokens.set(token, this.model.user(login) ?? this.model.addUser(login));
  }

  static async start(options: FakeForgeOptions = {}): Promise<FakeForge> {
    const forge = new FakeForge(options);
    const handler = (req: IncomingMessage, res: ServerResponse) => void forge.handle(req, res);
    forge.server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler);
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      forge.server.once('error', reject);
      forge.server.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = forge.server.address() as AddressInfo;
    forge.origin = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return forge;
  }

  /** The REST base URL (what FORGE_API_URL names). */
  get url(): string {
    return `${this.origin}${this.options.pathPrefix ?? ''}`;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The next matching requests get this fault. */
  fail(fault: Fault): void {
    this.faults.push({ times: 1, ...fault });
  }

  /** GitHub's secondary rate limit: 403 with Retry-After (or 429 when `status` says so). */
  secondaryRateLimit(retryAfterSeconds: number | null, options: { status?: 403 | 429; operationId?: string } = {}): void {
    this.fail({ status: options.status ?? 403, message: SECONDARY_LIMIT_MESSAGE, headers: retryAfterSeconds === null ? {} : { 'retry-after': String(retryAfterSeconds) }, operationId: options.operationId });
  }

  /** Answers to matching operations wait this long (cancellation tests); 0 removes the delay. */
  delay(ms: number, operationId?: string): void {
    this.delays.splice(0, this.delays.length, ...this.delays.filter((d) => d.operationId !== operationId));
    if (ms > 0) this.delays.push({ ms, operationId });
  }

  /** Uses up the primary budget of a token's user (or of anonymous callers: null), until `resetInSeconds`. */
  exhaustRateLimit(login: string | null, resetInSeconds = 600): void {
    const budget = this.budget(login === null ? 'anonymous' : `user:${login}`, login !== null);
    budget.used = budget.limit;
    budget.reset = Math.floor(Date.now() / 1000) + resetInSeconds;
  }

  /** Requests that reached an operation, optionally only one operation's. */
  calls(operationId?: string): RecordedRequest[] {
    return this.requests.filter((r) => r.operationId !== null && (!operationId || r.operationId === operationId));
  }

  private budget(key: string, authenticated: boolean): Budget {
    let budget = this.budgets.get(key);
    const now = Math.floor(Date.now() / 1000);
    if (!budget || budget.reset <= now) {
      const limits = this.options.rateLimit ?? { authenticated: 5000, anonymous: 60 };
      budget = { limit: authenticated ? limits.authenticated : limits.anonymous, used: 0, reset: now + RATE_WINDOW_SECONDS };
      this.budgets.set(key, budget);
    }
    return budget;
  }

  private later(ms: number, work: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work();
    }, ms);
    this.timers.add(timer);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    // Links and URLs in answers name the host the client asked for, as GitHub's do.
    const origin = req.headers.host ? `${this.options.tls ? 'https' : 'http'}://${req.headers.host}` : this.origin;
    const target = new URL(req.url ?? '/', origin);
    const prefix = this.options.pathPrefix ?? '';
    const path = target.pathname.startsWith(prefix) ? target.pathname.slice(prefix.length) : '';
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: `${path}${target.search}`,
      operationId: null,
      status: 0,
      authenticated: req.headers.authorization !== undefined,
      conditional: req.headers['if-none-match'] !== undefined,
      abandoned: false,
    };
    this.requests.push(record);
    res.once('close', () => (record.abandoned = !res.writableFinished));

    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'x-github-api-version-selected': '2022-11-28',
      'x-github-media-type': 'github.v3; format=json',
      'x-github-request-id': randomUUID(),
      vary: 'Accept, Authorization, Cookie, X-GitHub-OTP',
    };
    const send = (status: number, body?: unknown) => {
      record.status = status;
      if (record.operationId) this.check('responses', () => this.description.responseProblem(record.operationId!, status, body));
      const text = body === undefined ? undefined : JSON.stringify(body);
      if (text === undefined) delete headers['content-type'];
      res.writeHead(status, headers).end(text);
    };
    const sendError = (status: number, message: string, documentation = '/rest') =>
      send(status, { message, documentation_url: `${DOCS}${documentation}`, status: String(status) });

    const route = this.routes.find((r) => r.method === record.method && r.pattern.test(path));
    if (!route) return sendError(404, 'Not Found');
    record.operationId = route.operationId;

    const authorization = req.headers.authorization;
    const token = authorization?.match(/^(?:token|bearer)\s+(\S+)$/i)?.[1];
    const user = token ? (this.tokens.get(token) ?? null) : null;
    if (authorization !== undefined && !user) return sendError(401, 'Bad credentials');

    const budget = this.budget(user ? `user:${user.login}` : 'anonymous', user !== null);
    const rateHeaders = () =>
      Object.assign(headers, {
        'x-ratelimit-limit': String(budget.limit),
        'x-ratelimit-remaining': String(Math.max(budget.limit - budget.used, 0)),
        'x-ratelimit-reset': String(budget.reset),
        'x-ratelimit-used': String(budget.used),
        'x-ratelimit-resource': 'core',
      });
    rateHeaders();
    if (budget.used >= budget.limit) {
      return sendError(403, `API rate limit exceeded for ${user ? `user ID ${user.id}` : 'this address'}.`, '/rest/overview/rate-limits-for-the-rest-api');
    }

    let body: unknown;
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      return sendError(400, 'Problems parsing JSON');
    }
    this.check('requests', () => this.description.requestProblem(route.operationId, target.searchParams, body));

    for (const { ms } of this.delays.filter((d) => !d.operationId || d.operationId === route.operationId)) {
      await new Promise<void>((resolve) => this.later(ms, resolve));
    }

    const fault = this.faults.find((f) => !f.operationId || f.operationId === route.operationId);
    if (fault) {
      if (--fault.times! <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      budget.used += 1;
      rateHeaders();
      if (fault.destroy) {
        record.status = -1;
        return void req.socket.destroy();
      }
      Object.assign(headers, fault.headers);
      return sendError(fault.status ?? 500, fault.message ?? (fault.status && fault.status < 500 ? 'Forbidden' : 'Server Error'));
    }

    const params = Object.fromEntries(route.names.map((name, index) => [name, decodeURIComponent(route.pattern.exec(path)![index + 1])]));
    const options: OperationOptions = {
      dispatchReturnsRunDetails: this.options.dispatchReturnsRunDetails ?? true,
      runCreationDelayMs: this.options.runCreationDelayMs ?? 0,
      later: (ms, work) => this.later(ms, work),
    };
    let reply: OperationReply;
    try {
      reply = HANDLERS[route.operationId]({ params, query: target.searchParams, body, user, urls: { api: `${origin}${prefix}`, web: origin }, model: this.model, options, page: (items) => this.page(items, target, headers) });
    } catch (err) {
      budget.used += 1;
      rateHeaders();
      if (err instanceof ForgeHttpError) return sendError(err.status, err.message, err.documentationPath);
      throw err;
    }
    Object.assign(headers, reply.headers);

    if (record.method === 'GET' && reply.status === 200) {
      // A strong validator of the representation, as GitHub sends; a match costs no budget.
      const etag = `"${createHash('sha256').update(JSON.stringify(reply.body)).digest('hex')}"`;
      headers.etag = etag;
      if (req.headers['if-none-match'] === etag || req.headers['if-none-match'] === `W/${etag}`) return send(304);
    }
    budget.used += 1;
    rateHeaders();
    send(reply.status, reply.body);
  }

  /** One page of a list and GitHub's `Link` header (first/prev/next/last). */
  private page<T>(items: T[], target: URL, headers: Record<string, string>): T[] {
    const perPage = Math.min(Math.max(Number(target.searchParams.get('per_page')) || DEFAULT_PER_PAGE, 1), MAX_PER_PAGE);
    const pageNumber = Math.max(Number(target.searchParams.get('page')) || 1, 1);
    const last = Math.max(Math.ceil(items.length / perPage), 1);
    const link = (page: number, rel: string) => {
      const url = new URL(target.toString());
      url.searchParams.set('per_page', String(perPage));
      url.searchParams.set('page', String(page));
      return `<${url.toString()}>; rel="${rel}"`;
    };
    const links = [
      ...(pageNumber > 1 ? [link(pageNumber - 1, 'prev'), link(1, 'first')] : []),
      ...(pageNumber < last ? [link(pageNumber + 1, 'next'), link(last, 'last')] : []),
    ];
    if (links.length) headers.link = links.join(', ');
    return items.slice((pageNumber - 1) * perPage, pageNumber * perPage);
  }

  private check(kind: 'responses' | 'requests', problem: () => string | null): void {
    if (this.options.checkOpenApi === false) return;
    this.openapi[kind] += 1;
    const found = problem();
    if (found) this.openapi.violations.push(found);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
