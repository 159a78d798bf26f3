import * as path from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { SERVICE_KEY_PATTERN } from '../identity/key-secret';
import { TIERS, Tier } from '../identity/tiers';
import { parseClaimRules } from '../identity/claim-rules';
import { shownConfigValue } from './shown-value';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];
const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** The process environment the service reads, with defaults; validated once at start-up. */
export class AppConfig {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsString() @MinLength(1)
  HOST = '127.0.0.1';

  /** PostgreSQL when set; PGlite in DATA_DIR otherwise. */
  @Transform(emptyToUndefined) @IsOptional() @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @IsString() @MinLength(1)
  DATA_DIR = './data';

  @Transform(toInt) @IsInt() @Min(1) @Max(500)
  DATABASE_POOL_SIZE = 10;

  /** A service key `sk_svc_…` seeded into account `default` at start-up. */
  @Transform(emptyToUndefined) @IsOptional() @Matches(SERVICE_KEY_PATTERN, { message: 'BOOTSTRAP_API_KEY must look like sk_svc_ followed by 32 letters or digits' })
  BOOTSTRAP_API_KEY?: string;

  @IsIn(TIERS)
  BOOTSTRAP_TIER: Tier = 'free';

  @IsString() @MinLength(1)
  WORKSPACE_ROOT = './workspace';

  /** Largest workspace upload (the compressed archive), bytes. */
  @Transform(toInt) @IsInt() @Min(1024) @Max(1024 * 1024 * 1024)
  WORKSPACE_MAX_BYTES = 50 * 1024 * 1024;

  /** Most bytes one workspace may unpack to (a zip or gzip bomb stops here). */
  @Transform(toInt) @IsInt() @Min(1024) @Max(16 * 1024 * 1024 * 1024)
  WORKSPACE_MAX_UNPACKED_BYTES = 500 * 1024 * 1024;

  /** Most files one workspace may hold. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000)
  WORKSPACE_MAX_FILES = 50_000;

  /** How long an uploaded workspace lives. */
  @Transform(toInt) @IsInt() @Min(60) @Max(30 * 24 * 3600)
  WORKSPACE_TTL_SECONDS = 3600;

  /** How long a `git_url` workspace's shallow clone may take. */
  @Transform(toInt) @IsInt() @Min(1) @Max(3600)
  WORKSPACE_CLONE_TIMEOUT_SECONDS = 60;

  /** Where each process unpacks the workspaces its tools read (one folder per archive digest). */
  @IsString() @MinLength(1)
  WORKSPACE_CACHE_DIR = path.join(tmpdir(), 'tos-workspaces');

  /** Exceptions to the egress policy of tools: hosts, `*.suffix` patterns and CIDRs, comma-separated. */
  @IsString()
  EGRESS_ALLOW = '';

  /** Resolvers for the names tools reach (`ip[:port]`, comma-separated) instead of the system's: a filtering or split-horizon DNS. */
  @Matches(/^$|^\s*(\[?[0-9A-Fa-f:.]+\]?(:\d{1,5})?)(\s*,\s*\[?[0-9A-Fa-f:.]+\]?(:\d{1,5})?)*\s*$/, { message: 'EGRESS_DNS_SERVERS must be comma-separated IP addresses with optional ports (10.0.0.53, 10.0.0.54:5353, [fd00::53]:53)' })
  EGRESS_DNS_SERVERS = '';

  /**
   * Lets the operator register local stdio MCP servers (docs/upstreams.md#local-stdio-servers): commands
   * run as the service's user, so it is off unless the operator turns it on.
   */
  @IsIn(['true', 'false'], { message: 'UPSTREAMS_STDIO must be true or false' })
  UPSTREAMS_STDIO: 'true' | 'false' = 'false';

  /** Calls one stdio upstream runs at once in a process; more wait their turn. */
  @Transform(toInt) @IsInt() @Min(1) @Max(64)
  UPSTREAMS_STDIO_CONCURRENCY = 4;

  /** Seconds a stdio upstream's process may sit unused before it is stopped (started again on the next call). */
  @Transform(toInt) @IsInt() @Min(1) @Max(24 * 3600)
  UPSTREAMS_STDIO_IDLE_SECONDS = 600;

  /**
   * The Docker engine stdio upstreams' images run on, as the docker CLI's DOCKER_HOST
   * (`unix:///var/run/docker.sock` for the local one); empty: the container form is off
   * (docs/upstreams.md#the-container-form).
   */
  @Matches(/^$|^(unix|tcp|ssh|npipe):\/\/\S+$/, { message: 'UPSTREAMS_STDIO_DOCKER_HOST must be empty or a DOCKER_HOST URL (unix:///var/run/docker.sock)' })
  UPSTREAMS_STDIO_DOCKER_HOST = '';

  /** A stdio upstream container's memory cap (docker's --memory, swap included). */
  @Matches(/^\d{1,6}[kmg]$/, { message: 'UPSTREAMS_STDIO_CONTAINER_MEMORY must be a size such as 512m or 2g' })
  UPSTREAMS_STDIO_CONTAINER_MEMORY = '512m';

  /** A stdio upstream container's CPU cap (docker's --cpus). */
  @Matches(/^(?:\d{1,3})(?:\.\d{1,2})?$/, { message: 'UPSTREAMS_STDIO_CONTAINER_CPUS must be a number of CPUs such as 1 or 0.5' })
  UPSTREAMS_STDIO_CONTAINER_CPUS = '1';

  /** Processes (threads included) a stdio upstream container may hold at once (docker's --pids-limit). */
  @Transform(toInt) @IsInt() @Min(8) @Max(65_536)
  UPSTREAMS_STDIO_CONTAINER_PIDS = 256;

  /** MiB of the container's writable /tmp (its root is read-only). */
  @Transform(toInt) @IsInt() @Min(1) @Max(4096)
  UPSTREAMS_STDIO_CONTAINER_TMPFS_MIB = 64;

  /** The container's user unless its registration names one (`user`); empty: the image's own. */
  @Matches(/^$|^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?$/, { message: 'UPSTREAMS_STDIO_CONTAINER_USER must be empty or user[:group]' })
  UPSTREAMS_STDIO_CONTAINER_USER = '65534:65534';

  /** 32 random bytes (base64 or hex) sealing account secrets (AES-256-GCM); secrets are off without it. */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  SECRETS_KEY?: string;

  /** Earlier SECRETS_KEY values, comma-separated: secrets sealed with them still open (key rotation). */
  @IsString()
  SECRETS_PREVIOUS_KEYS = '';

  /** PEM file of certificates tools trust for outbound TLS besides the public roots (a corporate CA). */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  EGRESS_CA_FILE?: string;

  /** Nest modules to boot beside the built-in tools: npm package names or paths, comma-separated. */
  @IsString()
  EXTENSION_MODULES = '';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** PEM certificate chain file: with TLS_KEY, the service speaks HTTPS with HTTP/2 (HTTP/1.1 fallback). */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  TLS_CERT?: string;

  /** PEM private key file for TLS_CERT. */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  TLS_KEY?: string;

  /** Base URL clients reach the service at; used for documentation links. */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true })
  @MaxLength(2048)
  PUBLIC_URL?: string;

  /** Redis for the job queue, cross-process cancel and events; in-process executor when unset. */
  @Transform(emptyToUndefined) @IsOptional() @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** Namespace of this deployment's queue keys and channels in Redis. */
  @Matches(/^[A-Za-z0-9_-]{1,32}$/, { message: 'QUEUE_PREFIX must be 1..32 letters, digits, _ or -' })
  QUEUE_PREFIX = 'tos';

  /** api: HTTP only; worker: runs async executions only; all: both (the only choice without Redis). */
  @IsIn(ROLES)
  ROLE: Role = 'all';

  /** Async executions one process runs at once. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WORKER_CONCURRENCY = 16;

  /**
   * Threads that run `isolated` tools (CPU-heavy or caller-supplied code); default one less than the
   * cores, at least 2: with one thread, one account's call holds every thread there is.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(256)
  TOOL_THREADS = Math.max(2, availableParallelism() - 1);

  /** Threads of TOOL_THREADS one account may hold at once, however idle the rest; default half of them, rounded up. */
  @Transform(toInt) @IsOptional() @IsInt() @Min(1) @Max(256)
  TOOL_THREADS_PER_ACCOUNT?: number;

  /**
   * Heap (V8 old generation) of one tool thread: a call that grows past it ends INVALID_INPUT, its
   * thread with it. One allocation that overshoots it (V8's largest, about 1 GB) ends the process
   * instead, hence a default with room for one.
   */
  @Transform(toInt) @IsInt() @Min(32) @Max(65536)
  TOOL_THREAD_MAX_MEMORY_MB = 2048;

  /** `false` runs isolated tools on the event loop (debugging with breakpoints, measuring what isolation buys). */
  @IsIn(['true', 'false'], { message: 'ISOLATE_TOOLS must be true or false' })
  ISOLATE_TOOLS: 'true' | 'false' = 'true';

  /** A worker that stops renewing a job's lock this long (killed, hung) loses it; its execution ends in error. */
  @Transform(toInt) @IsInt() @Min(1) @Max(600)
  QUEUE_LOCK_SECONDS = 10;

  /** On SIGTERM, how long running executions may take to finish before they are handed back. */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600)
  SHUTDOWN_GRACE_SECONDS = 25;

  /** How often each process ends executions left active past their deadline (a process that died or lost the database); 0 disables. */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600)
  SWEEP_INTERVAL_SECONDS = 30;

  /** A running execution is overdue this long after its timeout: its runner would have ended it by then. */
  @Transform(toInt) @IsInt() @Min(1) @Max(3600)
  SWEEP_GRACE_SECONDS = 60;

  /** A queued execution no worker took in this long ends in a retryable error. */
  @Transform(toInt) @IsInt() @Min(1) @Max(7 * 86_400)
  QUEUE_MAX_WAIT_SECONDS = 3600;

  /**
   * How often each worker reconciles the queue with the database (queues again the queued
   * executions whose job was lost) and beats its heartbeat; 0 disables. With the defaults a lost
   * job runs again within about 10 s.
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600)
  RECONCILE_INTERVAL_SECONDS = 5;

  /** A queued execution younger than this is left to its submitter (its job may be on its way to the queue). */
  @Transform(toInt) @IsInt() @Min(1) @Max(3600)
  RECONCILE_MIN_AGE_SECONDS = 5;

  /** Queued executions checked per reconciler pass, oldest first: bounds a pass's work after a large loss. */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000)
  RECONCILE_BATCH = 500;

  /**
   * Seconds before each retry of a webhook delivery that failed (docs/API.md#webhooks), comma-separated:
   * the first attempt is at once, then one retry per number (each with ±10 % jitter); a delivery
   * failing them all disables its subscription. The default spans about three days.
   */
  @Matches(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, { message: 'WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, e.g. 5,300,1800' })
  WEBHOOK_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,36000';

  /** How often each ticking process claims due schedule ticks and starts pending runs and trigger events, in milliseconds; 0 stops it (docs/orchestration.md). */
  @Transform(toInt) @IsInt() @Min(0) @Max(60_000)
  ORCHESTRATION_POLL_MS = 1000;

  /** Seconds after which an API process discovers an upstream's tools again (docs/upstreams.md#staying-current); 0 only on request. */
  @Transform(toInt) @IsInt() @Min(0) @Max(86_400)
  UPSTREAM_REFRESH_SECONDS = 300;

  /** Days the upstreams' audit log keeps an event (docs/upstreams.md#audit-log); pruned every RETENTION_INTERVAL_SECONDS. */
  @Transform(toInt) @IsInt() @Min(1) @Max(3650)
  UPSTREAM_AUDIT_RETENTION_DAYS = 90;

  /** How often each delivering process looks for due webhook deliveries, in milliseconds; 0 stops delivering. */
  @Transform(toInt) @IsInt() @Min(0) @Max(60_000)
  WEBHOOK_POLL_MS = 500;

  /** Longest wait for an endpoint's answer to one webhook attempt, in milliseconds. */
  @Transform(toInt) @IsInt() @Min(100) @Max(60_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** Hours a rotated-out webhook secret keeps signing beside the new one. */
  @Transform(toInt) @IsInt() @Min(0) @Max(720)
  WEBHOOK_SECRET_OVERLAP_HOURS = 24;

  /** Deliveries one process sends at once in all, and to one subscription (so a slow endpoint holds only its own). */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000)
  WEBHOOK_CONCURRENCY = 64;

  @Transform(toInt) @IsInt() @Min(1) @Max(100)
  WEBHOOK_ENDPOINT_CONCURRENCY = 4;

  /** How often old executions are purged (per the account tier's retention); 0 disables. */
  @Transform(toInt) @IsInt() @Min(0) @Max(86_400)
  RETENTION_INTERVAL_SECONDS = 3600;

  /** Requests per minute per client IP that carry no valid key (slows key guessing). */
  @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000)
  IP_RATE_LIMIT = 100;

  /** How long a console sign-in link works (it works once). */
  @Transform(toInt) @IsInt() @Min(30) @Max(3600)
  CONSOLE_LINK_TTL_SECONDS = 600;

  /** A console session unused this long is over. */
  @Transform(toInt) @IsInt() @Min(60) @Max(86_400)
  CONSOLE_SESSION_IDLE_SECONDS = 1800;

  /** A console session is over this long after sign-in, however busy. */
  @Transform(toInt) @IsInt() @Min(300) @Max(7 * 86_400)
  CONSOLE_SESSION_MAX_SECONDS = 12 * 3600;

  /** A WebSocket of live updates (GET /v1/ws) that hears nothing from its client this long closes (SPEC §8); pinged at a third of it. */
  @Transform(toInt) @IsInt() @Min(1) @Max(3600)
  WS_IDLE_TIMEOUT_SECONDS = 60;

  /** How long a verified key stays in the in-process cache; a revoke clears it at once. */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600)
  AUTH_CACHE_TTL_SECONDS = 30;

  /**
   * Browser origins allowed to call /v1/mcp, comma-separated (`*` for any); PUBLIC_URL's origin
   * always is. A request whose Origin is not allowed gets 403 (DNS-rebinding protection).
   */
  @IsString()
  MCP_ALLOWED_ORIGINS = '';

  /**
   * Issuer of the OAuth access tokens /v1 and /v1/mcp accept beside API keys (docs/authorization.md):
   * listed in the protected resource metadata; its JWKS verifies the tokens. Off when unset.
   */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  OAUTH_ISSUER?: string;

  /**
   * Runs the built-in authorization server at PUBLIC_URL/oauth (docs/authorization.md#the-built-in-authorization-server);
   * OAUTH_ISSUER then defaults to it.
   */
  @IsIn(['true', 'false'], { message: 'OAUTH_BUILTIN must be true or false' })
  OAUTH_BUILTIN: 'true' | 'false' = 'false';

  /**
   * Requests per minute per client IP to the built-in server's registration endpoint, and as many to
   * its token endpoint (docs/authorization.md#limits): hosted clients share a few egress IPs, hence generous.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000)
  OAUTH_IP_RATE_LIMIT = 300;

  /** The issuer's JWKS; read from its RFC 8414 (or OpenID) metadata when unset. */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  OAUTH_JWKS_URL?: string;

  /**
   * How an access token's subject becomes an account (docs/authorization.md#external-authorization-server):
   * `account`, its `sub` is an account id (the built-in server's tokens); `claims`, its claims go
   * through OIDC_RULES, for an OAUTH_ISSUER that is the company's identity provider.
   */
  @IsIn(['account', 'claims'], { message: 'OAUTH_SUBJECT must be account or claims' })
  OAUTH_SUBJECT: 'account' | 'claims' = 'account';

  /** The operator's OpenID provider for console sign-in (docs/authorization.md#single-sign-on); off when unset. */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  OIDC_ISSUER?: string;

  /** The client this service is registered as at OIDC_ISSUER. */
  @Transform(emptyToUndefined) @IsOptional() @IsString() @MaxLength(512)
  OIDC_CLIENT_ID?: string;

  /** That client's secret (client_secret_basic); never logged or shown. */
  @Transform(emptyToUndefined) @IsOptional() @IsString() @MaxLength(1024)
  OIDC_CLIENT_SECRET?: string;

  /** The name on the console's "Sign in with …" button. */
  @IsString() @MinLength(1) @MaxLength(64)
  OIDC_PROVIDER_NAME = 'your identity provider';

  /** Scopes asked of the provider at sign-in, space-separated; openid is always among them. */
  @Matches(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, { message: 'OIDC_SCOPES must be scope names separated by single spaces' })
  OIDC_SCOPES = 'openid email profile';

  /** The claim holding the user's groups (an array of names), read by group rules. */
  @Matches(/^[A-Za-z0-9_.:/-]{1,128}$/, { message: 'OIDC_GROUPS_CLAIM must be a claim name' })
  OIDC_GROUPS_CLAIM = 'groups';

  /**
   * Claim rules, a JSON array (docs/authorization.md#claim-rules): `{"group": …}` or `{"email_domain": …}`
   * with `"account"` and `"role"`; the first rule a user matches decides, none refuses them.
   */
  @Transform(emptyToUndefined) @IsOptional() @IsString() @MaxLength(200_000)
  OIDC_RULES?: string;

  /** Tools per MCP tools/list page. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  MCP_PAGE_SIZE = 50;

  /** Serves Prometheus metrics at GET /metrics on the main port to `Authorization: Bearer <this>`. */
  @Transform(emptyToUndefined) @IsOptional() @IsString() @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' }) @MaxLength(256)
  METRICS_TOKEN?: string;

  /** Serves Prometheus metrics at GET /metrics on this port of HOST, without a token (any role, workers too). */
  @Transform(toInt) @IsOptional() @IsInt() @Min(0) @Max(65535)
  METRICS_PORT?: number;

  /** Serves GET /healthz and /readyz on this port of HOST too, plain HTTP, in every role (workers have no other HTTP). */
  @Transform(toInt) @IsOptional() @IsInt() @Min(0) @Max(65535)
  HEALTH_PORT?: number;

  /** OTLP/HTTP collector base URL (…/v1/traces is appended); traces are off when unset. */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** The environment this configuration was read from: where tools' declared settings are read too. */
  declare readonly environment: Readonly<Record<string, string | undefined>>;

  get runsApi(): boolean {
    return this.ROLE !== 'worker';
  }

  get runsWorker(): boolean {
    return this.ROLE !== 'api';
  }

  get publicUrl(): string {
    return (this.PUBLIC_URL ?? `http://localhost:${this.PORT}`).replace(/\/+$/, '');
  }
}

/** Where the built-in authorization server is mounted: its issuer is PUBLIC_URL + this. */
export const BUILTIN_ISSUER_PATH = '/oauth';
/** The built-in server's consent page (ours, src/oauth/consent-page.ts): under the issuer, but not oidc-provider's. */
export const INTERACTION_PATH = `${BUILTIN_ISSUER_PATH}/interaction/`;

/** Variables holding credentials: a start-up error names them but never shows their value. */
const CREDENTIAL_VARIABLES: ReadonlySet<string> = new Set(['BOOTSTRAP_API_KEY', 'METRICS_TOKEN', 'SECRETS_KEY', 'SECRETS_PREVIOUS_KEYS', 'OIDC_CLIENT_SECRET']);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates configuration; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new AppConfig());
  const picked = Object.fromEntries(known.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
  const config = plainToInstance(AppConfig, picked);
  const errors = validateSync(config, { forbidUnknownValues: true });
  const lines = errors.map(
    (e) => `  ${e.property}=${shownConfigValue(env[e.property], CREDENTIAL_VARIABLES.has(e.property))}: ${Object.values(e.constraints ?? {}).join('; ')}`,
  );
  if (errors.length === 0 && !config.TLS_CERT !== !config.TLS_KEY) {
    lines.push(`  TLS_CERT/TLS_KEY: set both (HTTPS) or neither (plain HTTP behind a proxy)`);
  }
  if (errors.length === 0 && config.ROLE !== 'all' && !config.REDIS_URL) {
    lines.push(`  ROLE=${JSON.stringify(config.ROLE)}: separate api and worker processes share work through Redis; set REDIS_URL or use ROLE=all`);
  }
  if (errors.length === 0 && config.OAUTH_BUILTIN === 'true' && !config.PUBLIC_URL) {
    lines.push(`  OAUTH_BUILTIN: set PUBLIC_URL too, the URL clients reach the service at: it is the authorization server's issuer (docs/authorization.md#the-built-in-authorization-server)`);
  } else if (errors.length === 0 && config.OAUTH_ISSUER && !config.PUBLIC_URL) {
    lines.push(`  OAUTH_ISSUER: set PUBLIC_URL too, the URL clients reach the service at: access tokens are accepted only for the resources under it (docs/authorization.md#access-tokens)`);
  }
  if (errors.length === 0) lines.push(...singleSignOnProblems(config));
  if (lines.length > 0) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  if (config.OAUTH_BUILTIN === 'true') config.OAUTH_ISSUER ??= `${config.publicUrl}${BUILTIN_ISSUER_PATH}`;
  return Object.defineProperty(config, 'environment', { value: Object.freeze({ ...env }), enumerable: false });
}

/** What single sign-on and claim-mapped tokens need together (docs/authorization.md#single-sign-on). */
function singleSignOnProblems(config: AppConfig): string[] {
  const problems: string[] = [];
  const howto = '(docs/authorization.md#single-sign-on)';
  if (config.OIDC_RULES !== undefined) {
    try {
      parseClaimRules(config.OIDC_RULES);
    } catch (err) {
      problems.push(`  OIDC_RULES: ${(err as Error).message} ${howto}`);
    }
  }
  if (config.OIDC_ISSUER) {
    const missing = (['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_RULES', 'PUBLIC_URL'] as const).filter((name) => config[name] === undefined);
    if (missing.length > 0) problems.push(`  OIDC_ISSUER: set ${missing.join(', ')} too: the client registered at the provider, the rules that map its users to accounts, and the URL its redirect comes back to ${howto}`);
    if (!isSecureOrLoopback(config.OIDC_ISSUER)) problems.push(`  OIDC_ISSUER: must be https (plain http only on a loopback address) ${howto}`);
    if (!config.OIDC_SCOPES.split(' ').includes('openid')) problems.push(`  OIDC_SCOPES: must include openid ${howto}`);
  }
  if (config.OAUTH_SUBJECT === 'claims') {
    if (config.OAUTH_BUILTIN === 'true') problems.push(`  OAUTH_SUBJECT=claims: the built-in authorization server's tokens name accounts; claims are for an external OAUTH_ISSUER ${howto}`);
    else if (!config.OAUTH_ISSUER || config.OIDC_RULES === undefined) problems.push(`  OAUTH_SUBJECT=claims: set OAUTH_ISSUER (the identity provider) and OIDC_RULES (how its claims map to accounts) ${howto}`);
  }
  return problems;
}

function isSecureOrLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'https:' || ['127.0.0.1', '[::1]', 'localhost'].includes(hostname);
}
