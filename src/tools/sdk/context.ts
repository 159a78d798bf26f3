import type { promises as dnsPromises } from 'node:dns';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { ToolDefinition, ToolInput, ToolOutput, ToolSettingDefinition } from './definition';

type DnsResolver = dnsPromises.Resolver;

/** What a running tool gets besides its input. */
export interface ToolLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface WorkspaceFile {
  /** Path relative to the workspace root, with `/` separators. */
  path: string;
  size: number;
}

export interface WorkspaceListOptions {
  /** Only these relative paths (inside the listed directory); each must exist. */
  files?: readonly string[];
  /** Stop with INVALID_INPUT when more files than this would be returned. */
  maxFiles?: number;
  /** Skip files larger than this many bytes. */
  maxFileBytes?: number;
  /**
   * Which paths a walk leaves out, asked of every directory before it is walked (a `true` prunes it)
   * and of every file, by workspace path; excluded files do not count toward `maxFiles`. When
   * given it alone decides; by default the `.git` and `node_modules` directories are left out.
   */
  exclude?: (path: string, kind: 'file' | 'directory') => boolean;
}

/**
 * Sandboxed access to WORKSPACE_ROOT. Every path is relative to the root; `..`,
 * absolute paths and symlinks out of it are refused with a ToolError (INVALID_INPUT).
 */
export interface Workspace {
  readonly root: string;
  /** Absolute real path of a workspace-relative path, after the sandbox check. */
  resolve(relativePath: string, parameter?: string): Promise<string>;
  /** Reads a text file, refusing files larger than `maxBytes`. */
  readText(relativePath: string, maxBytes: number, parameter?: string): Promise<string>;
  /** Regular files under a directory (or the file itself), sorted, sandbox-checked. */
  listFiles(relativePath: string, options?: WorkspaceListOptions, parameter?: string): Promise<WorkspaceFile[]>;
}

/** How a tool (ToolContext) or a prompt (PromptHandler.get) asks its caller for input mid-run. */
export interface AskingContext {
  /**
   * Asks the caller a question (`key` names it, unique within the call) and resolves with the
   * answer: for an elicitation `{ action: 'accept' | 'decline' | 'cancel', content? }`, for a
   * sampling request the message the caller's model wrote, for `roots/list` `{ roots }`. The call
   * stops at the first question not yet answered and its caller gets every question asked so far;
   * when it calls again with the answers, the tool (or prompt) runs again **from the start** and each
   * `requestInput` of an answered question resolves at once. So ask before doing anything that
   * must not happen twice. A tool called over REST or MCP 2026-07-28 can be asked, sync (the
   * answers come with the next call) and async (an execution, or an MCP task, waits in
   * `input_required`); an MCP 2025 call, or an async one holding secret inputs, cannot: this
   * rejects with a ToolError (INVALID_INPUT) saying so. A prompt can be asked over MCP 2026-07-28
   * (prompts/get answers `input_required`); over 2025 this rejects with an invalid-params error.
   */
  requestInput(key: string, request: InputRequest): Promise<Record<string, unknown>>;
  /** Whether this call's caller can answer a question of this kind (a 2026-07-28 client declares which). */
  canAsk(method: InputRequest['method']): boolean;
}

/** What a running tool gets besides its input; `D` (the tool's definition) types `config`. */
export type ToolContext<D extends ToolDefinition | undefined = undefined> = ToolContextBase & { readonly config: ConfigOf<D> };

/** The context without its typed settings. */
export interface ToolContextBase extends AskingContext {
  readonly executionId: string;
  /** Aborts on cancel and on timeout; long work must watch it. */
  readonly signal: AbortSignal;
  /**
   * Waits `ms` (a poll's pause, a retry's back-off); rejects with the signal's reason as soon as
   * the call is cancelled or times out, so a waiting tool stops at once.
   */
  sleep(ms: number): Promise<void>;
  /** Reports progress, 0..100; persistence is throttled by the runner. */
  progress(percent: number, message?: string): void;
  readonly logger: ToolLogger;
  readonly workspace: Workspace;
  /** Outbound HTTP under the egress policy, bound to `signal`. */
  readonly http: ToolHttp;
  /** TCP/TLS sockets under the egress policy. */
  readonly net: ToolNet;
  readonly dns: ToolDns;
  /** A subprocess without a shell, in the workspace, killed with its process group on abort. */
  exec(command: string, args: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  readonly secrets: ToolSecrets;
}

/** A question for the caller, as MCP's input requests put it (the caller's client shows it to its user or model). */
export type InputRequest =
  | { method: 'elicitation/create'; params: { message: string; requestedSchema: Record<string, unknown>; mode?: 'form' } }
  | { method: 'sampling/createMessage'; params: { messages: Record<string, unknown>[]; maxTokens: number; [member: string]: unknown } }
  | { method: 'roots/list'; params?: Record<string, never> };

export type ToolSettingValue = string | number | boolean;

/** The values of declared settings, typed by their declarations. */
export type ToolSettings<S extends Readonly<Record<string, ToolSettingDefinition>>> = {
  readonly [Name in keyof S]: SettingValue<S[Name]> | (S[Name] extends { default: ToolSettingValue } ? never : undefined);
};

type SettingValue<S extends ToolSettingDefinition> = S['type'] extends 'integer' ? number : S['type'] extends 'boolean' ? boolean : string;

export interface ToolHttp {
  /**
   * High-level call: egress policy at connect time on the resolved address, redirects (≤ 5, each
   * re-checked; `redirect: 'manual'` to not follow), body capped, bound to ctx.signal. Does not
   * throw on HTTP status: the tool decides (see ToolError.fromResponse).
   */
  request(url: string | URL, options?: HttpRequestOptions): Promise<HttpResponse>;
  /** WHATWG fetch through the same policy dispatcher and signal (Octokit `request: { fetch }`). */
  readonly fetch: typeof fetch;
  /** The undici Dispatcher with the policy, for undici-native code. */
  readonly dispatcher: Dispatcher;
  /** node:http / node:https Agents whose connections pass the same policy (axios, node-fetch). */
  readonly agents: { http: HttpAgent; https: HttpsAgent };
}

export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Sets the body and `content-type: application/json`. */
  json?: unknown;
  /** Default 10 MiB; over it the body is cut and `truncated` is true. */
  maxResponseBytes?: number;
  /** Besides ctx.signal. */
  timeoutMs?: number;
  /** Default follow. */
  redirect?: 'follow' | 'manual';
  /** The input the URL came from: an egress refusal is INVALID_INPUT naming it. */
  parameter?: string;
  /** Extra trust for HTTPS (a test CA), and whether to verify. */
  tls?: { ca?: string | string[]; rejectUnauthorized?: boolean };
}

export interface HttpResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Final URL after redirects. */
  url: string;
  redirects: number;
  body: Buffer;
  truncated: boolean;
  text(): string;
  /** ToolError (TOOL_ERROR, not retryable) when the body is not JSON. */
  json<T = unknown>(): T;
  timing: { total_ms: number; ttfb_ms: number };
  /** Peer certificate of an HTTPS answer, when there was one. */
  certificate?: { valid_to: string; subject?: string; issuer?: string };
}

export interface NetConnectOptions {
  host: string;
  port: number;
  /** TLS when set; an object adds node:tls options (ca, servername, rejectUnauthorized). */
  tls?: boolean | ConnectionOptions;
  timeoutMs?: number;
  parameter?: string;
}

export interface ToolNet {
  /** TCP (or TLS) socket to host:port after the policy check on the resolved address. */
  connect(options: NetConnectOptions): Promise<Socket>;
  /** Resolves a host and checks every address; returns the one to connect to (pinned). */
  resolve(host: string, options?: { parameter?: string }): Promise<{ address: string; family: 4 | 6 }>;
  /**
   * The certificates outbound TLS trusts (the public roots plus EGRESS_CA_FILE's), for a library
   * that negotiates TLS itself (STARTTLS); undefined means Node's defaults.
   */
  readonly trustedCa: readonly string[] | undefined;
}

export interface ToolDns {
  /** A node:dns promises Resolver; with `server` ("host:port", checked by the policy) it asks that server. */
  resolver(options?: { server?: string; timeoutMs?: number; parameter?: string }): DnsResolver;
}

export interface ExecOptions {
  /** Workspace-relative, sandbox-checked; default the workspace root. */
  cwd?: string;
  /** Added to a minimal env (PATH, HOME=a temp dir, LANG); none of the service's variables. */
  env?: Record<string, string>;
  input?: string | Uint8Array;
  timeoutMs?: number;
  /** Per stream, default 1 MiB; output cut and `truncated` true. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
}

export interface ToolSecrets {
  /** The account's secret, else the service-wide setting, else ToolError naming how to set it. */
  get(name: string): Promise<string>;
  /** Same lookup; undefined when neither is set. */
  find(name: string): Promise<string | undefined>;
}

/**
 * A tool's implementation. `D` is its definition (`defineTool`): input, result and `ctx.config`
 * are then typed from it; without `D`, loosely (the service's side, which runs any tool).
 */
export interface ToolHandler<D extends ToolDefinition | undefined = undefined> {
  /**
   * The questions to settle before the work starts (`ctx.requestInput`), when they do not depend
   * on the work: a call that becomes an MCP task asks them first, round by round, and the task
   * exists only once they are answered (SEP-2663); every other call asks them at the start of its
   * run, as `execute` would. Their answers are the run's: `ctx.requestInput` of the same key in
   * `execute` resolves at once. Quick and without effects: it runs in the API process, on every round.
   */
  ask?(input: HandlerInput<D>, ctx: AskingContext): Promise<void>;
  execute(input: HandlerInput<D>, ctx: ToolContext<D>): Promise<HandlerOutput<D>>;
}


/** The settings the tool declared in `config`, typed (integer → number, boolean → boolean; undefined when unset without a default). */
type ConfigOf<D> = D extends ToolDefinition ? ToolSettings<NonNullable<D['config']>> : Readonly<Record<string, ToolSettingValue | undefined>>;
type HandlerInput<D> = D extends ToolDefinition ? ToolInput<D> : Record<string, any>;
type HandlerOutput<D> = D extends ToolDefinition ? ToolOutput<D> : Record<string, unknown>;
