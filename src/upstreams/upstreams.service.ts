import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, LessThan, Not, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { canonicalJson } from '../common/canonical-json';
import { AppException } from '../common/errors';
import { ToolError } from '../tools/sdk';
import { randomBase62 } from '../common/ids';
import { underAccountCap } from '../database/account-cap';
import { AppConfig } from '../config/app-config';
import { canUseTool, type Principal } from '../identity/principal';
import { SecretsService } from '../secrets/secrets.service';
import { EgressPool, egressSettingsOf, type Egress } from '../tools/egress/egress';
import { checkedRegisteredUrl } from '../tools/egress/registered-url';
import { createToolHttp } from '../tools/egress/tool-network';
import { CatalogueChanges, EVERY_ACCOUNT } from '../tools/catalogue-changes';
import { RuntimeTools } from '../tools/runtime-tools';
import { Execution } from '../executions/engine/execution.entity';
import type { RegisteredTool } from '../tools/tool-catalogue';
import { dereferencedDocument, documentOfText, operationTools } from './openapi-document';
import { discoverTools, listedTools, upstreamSessions, type UpstreamConnection } from './upstream-client';
import { stdioProcessOf, stdioView } from './stdio-launch';
import { StdioSupervisor, type StdioStart } from './stdio-supervisor';
import { OPERATOR_ACTOR, UpstreamAudit, type AuditEntry, type AuditFilter } from './upstream-audit';
import { enabledTools, registeredUpstreamTool, unreachable, upstreamToolId, type UpstreamCalls } from './upstream-tool';
import type { UpstreamHealth } from '../common/probes';
import { Upstream, type DiscoveredTool, type StdioLaunchSpec, type UpstreamAuth, type UpstreamToolFilter } from './upstream.entity';

export const MAX_UPSTREAMS_PER_ACCOUNT = 20;
/** How long discovery (initialize + tools/list) may take at registration and refresh. */
const DISCOVERY_TIMEOUT_MS = 15_000;
/** An OpenAPI document fetched from spec_url may be at most this large. */
const MAX_SPEC_BYTES = 2 * 1024 * 1024;
/** How long an account's upstreams are reused between catalogue reads (a change shows within this, in every process). */
const FRESH_MS = 1_000;
/** A change heard by several API processes is discovered by one: the others find the upstream refreshed this recently. */
const HEARD_CLAIM_MS = 2_000;

export interface UpstreamFields {
  name: string;
  url: string;
  auth: UpstreamAuth;
  tools?: UpstreamToolFilter;
  timeout?: number;
  cache_ttl?: number;
}

/** An OpenAPI upstream as registered: its document from `spec_url` or inline `spec`, the operations to offer. */
export type OpenApiUpstreamFields = {
  name: string;
  base_url: string;
  operations: string[];
  auth: UpstreamAuth;
  timeout?: number;
  cache_ttl?: number;
} & ({ spec_url: string } | { spec: unknown });

/**
 * An upstream the operator registers (docs/upstreams.md#operator-registered-upstreams): owned by the
 * named account, whose secrets it uses; `shared` puts its tools in every account's catalogue.
 */
export type OperatorUpstreamFields = {
  accountId: string;
  name: string;
  shared: boolean;
  tools?: UpstreamToolFilter;
  timeout?: number;
} & ({ url: string; auth: UpstreamAuth } | { stdio: StdioLaunchSpec });

export interface UpstreamChange {
  enabled?: boolean;
  /** Per upstream tool name: false switches it off, true on again. */
  tools_enabled?: Record<string, boolean>;
  cache_ttl?: number;
}

/** An upstream as the API shows it: where, how authenticated (the secret's name only), its tools and its health. */
export function upstreamView(row: Upstream): Record<string, unknown> {
  const off = new Set(row.disabled_tools);
  const where = row.transport === 'openapi'
    ? { type: 'openapi', base_url: row.url, spec_url: row.spec_url, operations: row.tool_filter.include ?? [] }
    : row.stdio
      ? { type: 'mcp', transport: 'stdio', stdio: stdioView(row.stdio), tools_filter: row.tool_filter }
      : { type: 'mcp', transport: row.transport, url: row.url, tools_filter: row.tool_filter };
  return {
    id: row.id,
    name: row.name,
    ...where,
    auth: row.auth,
    timeout: row.timeout_seconds,
    cache_ttl: row.cache_ttl_seconds,
    enabled: row.enabled,
    shared: row.shared,
    registered_by: row.operator_registered ? 'operator' : 'account',
    tools: row.tools.map((tool) => ({
      name: tool.name,
      id: upstreamToolId(row, tool.name),
      enabled: !off.has(tool.name),
      ...(tool.operation && { operation: `${tool.operation.method} ${tool.operation.path}` }),
      ...(tool.description && { description: tool.description }),
    })),
    status: {
      tool_count: row.tools.length,
      last_contact_at: row.last_contact_at?.toISOString() ?? null,
      last_error: row.last_error,
      latency_ms: row.latency_ms,
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** What the audit log keeps of a registration: where and how, the secrets by name only (as the view shows them). */
function registrationDetails(row: Upstream): Record<string, unknown> {
  const { id: _id, name: _name, tools: _tools, status: _status, enabled: _enabled, created_at: _created, updated_at: _updated, ...details } = upstreamView(row);
  return details;
}

/** The events a change makes: each switch turned, and `upstream.updated` naming the settings changed. */
function changeEvents(before: Upstream, after: Upstream): Array<Pick<AuditEntry, 'action' | 'details'>> {
  const events: Array<Pick<AuditEntry, 'action' | 'details'>> = [];
  if (before.enabled !== after.enabled) events.push({ action: after.enabled ? 'upstream.enabled' : 'upstream.disabled' });
  const [was, is] = [new Set(before.disabled_tools), new Set(after.disabled_tools)];
  for (const tool of after.disabled_tools) if (!was.has(tool)) events.push({ action: 'upstream.tool_disabled', details: { tool, tool_id: upstreamToolId(after, tool) } });
  for (const tool of before.disabled_tools) if (!is.has(tool)) events.push({ action: 'upstream.tool_enabled', details: { tool, tool_id: upstreamToolId(after, tool) } });
  if (before.cache_ttl_seconds !== after.cache_ttl_seconds) events.push({ action: 'upstream.updated', details: { cache_ttl: { from: before.cache_ttl_seconds, to: after.cache_ttl_seconds } } });
  return events;
}

/** Whether the filter keeps an upstream tool: in `include` when there is one, and not in `exclude`. */
function kept(filter: UpstreamToolFilter, name: string): boolean {
  return (!filter.include || filter.include.includes(name)) && !filter.exclude?.includes(name);
}

/**
 * Upstream MCP servers of an account (docs/upstreams.md): registration with discovery, the
 * switches, refresh, and their tools as the account's catalogue sees them.
 */
@Injectable()
export class UpstreamsService implements OnModuleInit, OnApplicationShutdown {
  private readonly egress: Egress;
  private readonly logger = new Logger(UpstreamsService.name);
  private readonly recent = new Map<string, { at: number; upstreams: Upstream[] }>();

  constructor(
    @InjectRepository(Upstream) private readonly upstreams: Repository<Upstream>,
    @InjectRepository(Execution) private readonly executions: Repository<Execution>,
    private readonly secrets: SecretsService,
    private readonly runtimeTools: RuntimeTools,
    private readonly changes: CatalogueChanges,
    private readonly stdio: StdioSupervisor,
    private readonly audit: UpstreamAudit,
    config: AppConfig,
    egresses: EgressPool,
  ) {
    this.egress = egresses.for(egressSettingsOf(config));
    stdio.onToolsChanged((id) => void this.heardToolsChanged(id));
    this.calls = {
      stdio: (upstream, signal, work) => this.stdio.use(upstream, () => this.stdioStart(upstream), signal, work),
      ownerSecret: (upstream, name) => this.secrets.find(upstream.account_id, name),
      runsAsync: async (executionId) => (await this.executions.findOne({ where: { id: executionId }, select: { id: true, mode: true } }))?.mode === 'async',
      rememberTask: async (executionId, upstream, taskId) => {
        await this.executions.update({ id: executionId }, { upstream_task: { upstream_id: upstream.id, task_id: taskId } });
      },
      called: (upstream, toolName, executionId, outcome) => this.audit.recordCall(upstream, upstreamToolId(upstream, toolName), executionId, outcome),
    };
  }

  private readonly calls: UpstreamCalls;

  /** A queued call of an upstream tool finds it here, on whichever process runs it. */
  onModuleInit(): void {
    this.runtimeTools.provide((accountId, toolId) => this.toolOfAccount(accountId, toolId));
  }

  /** Kept upstream sessions are closed (their GET streams would hold the process's connections). */
  onApplicationShutdown(): void {
    upstreamSessions.closeAll();
  }

  /** Registers the upstream and discovers its tools; an unreachable one is kept with its error (fix it, then refresh). */
  async create(principal: Principal, fields: UpstreamFields, now = new Date()): Promise<Record<string, unknown>> {
    const url = checkedRegisteredUrl(fields.url, this.egress.policy, 'name a secret in auth.bearer_secret_name instead');
    const row = this.newRow(principal, { name: fields.name, transport: 'streamable-http', url, auth: fields.auth, tool_filter: fields.tools ?? {}, timeout_seconds: fields.timeout ?? 30, cache_ttl_seconds: fields.cache_ttl ?? 0 }, now);
    await this.insert(principal, row, principal.keyId);
    await this.discover(row);
    return upstreamView(row);
  }

  /**
   * Registers OpenAPI operations as tools (docs/upstreams.md#openapi-operations): the document is
   * read, checked and dereferenced first, so an unknown operation, an unsupported content type or
   * a document that cannot be fetched is a 400 and nothing is stored.
   */
  async createOpenApi(principal: Principal, fields: OpenApiUpstreamFields, now = new Date()): Promise<Record<string, unknown>> {
    const url = checkedRegisteredUrl(fields.base_url, this.egress.policy, 'name a secret in auth instead', 'base_url');
    if (/[?#]/.test(url)) throw AppException.invalidRequest('base_url must not have a query or a fragment', { parameter: 'base_url' });
    const specUrl = 'spec_url' in fields ? checkedRegisteredUrl(fields.spec_url, this.egress.policy, 'serve the document without credentials, or pass it as spec', 'spec_url') : null;
    const started = Date.now();
    const raw = specUrl ? await this.fetchedDocument(specUrl) : typeof (fields as { spec: unknown }).spec === 'string' ? await documentOfText((fields as { spec: string }).spec, 'spec') : (fields as { spec: unknown }).spec;
    const tools = operationTools(await dereferencedDocument(raw), fields.operations);
    const row = this.newRow(principal, { name: fields.name, transport: 'openapi', url, spec_url: specUrl, auth: fields.auth, tool_filter: { include: fields.operations }, timeout_seconds: fields.timeout ?? 30, cache_ttl_seconds: fields.cache_ttl ?? 0 }, now);
    Object.assign(row, { tools, ...(specUrl && { last_contact_at: new Date(), latency_ms: Date.now() - started }) });
    await this.insert(principal, row, principal.keyId);
    this.announce(row, row.tools.map((tool) => tool.name));
    return upstreamView(row);
  }

  /**
   * An operator command's registration (src/operator/operator-actions.ts): a stdio server (only with
   * UPSTREAMS_STDIO=true) or a Streamable HTTP one, possibly shared with every account.
   */
  async createByOperator(fields: OperatorUpstreamFields, now = new Date()): Promise<Record<string, unknown>> {
    const owner = { accountId: fields.accountId } as Principal;
    const common = { name: fields.name, tool_filter: fields.tools ?? {}, timeout_seconds: fields.timeout ?? 30, shared: fields.shared, operator_registered: true };
    let row: Upstream;
    if ('stdio' in fields) {
      if (!this.stdio.enabled) throw new AppException('FORBIDDEN', 'Stdio upstreams are off on this service: the operator sets UPSTREAMS_STDIO=true to allow them (docs/upstreams.md#local-stdio-servers)', { details: { parameter: 'transport' } });
      if ('image' in fields.stdio && !this.stdio.containers) throw new AppException('FORBIDDEN', 'Images are off on this service: the operator sets UPSTREAMS_STDIO_DOCKER_HOST to the engine they run on (docs/upstreams.md#the-container-form)', { details: { parameter: 'image' } });
      row = this.newRow(owner, { ...common, transport: 'stdio', url: '', auth: { none: true }, stdio: fields.stdio }, now);
    } else {
      const url = checkedRegisteredUrl(fields.url, this.egress.policy, 'name a secret in auth.bearer_secret_name instead');
      row = this.newRow(owner, { ...common, transport: 'streamable-http', url, auth: fields.auth }, now);
    }
    if (fields.shared && (await this.upstreams.exists({ where: { name: fields.name, shared: true } }))) {
      throw new AppException('CONFLICT', `A shared upstream named '${fields.name}' exists: pick another name`, { details: { parameter: 'name' } });
    }
    await this.insert(owner, row, OPERATOR_ACTOR);
    if (fields.shared) this.recent.clear();
    await this.discover(row);
    return upstreamView(row);
  }

  /** An operator command's removal: the upstream of that account and name, its process stopped here. */
  async deleteByOperator(accountId: string, name: string): Promise<void> {
    const row = await this.upstreams.findOne({ where: { account_id: accountId, name } });
    if (!row) throw AppException.notFound('Upstream', name);
    await this.deleteRecorded(row, OPERATOR_ACTOR);
    await this.stdio.stop(row.id);
    this.recent.clear();
    this.announce(row, row.tools.map((tool) => tool.name));
  }

  private newRow(principal: Principal, fields: Pick<Upstream, 'name' | 'transport' | 'url' | 'auth' | 'tool_filter' | 'timeout_seconds'> & Partial<Pick<Upstream, 'spec_url' | 'stdio' | 'shared' | 'operator_registered' | 'cache_ttl_seconds'>>, now: Date): Upstream {
    return this.upstreams.create({
      spec_url: null,
      stdio: null,
      shared: false,
      operator_registered: false,
      cache_ttl_seconds: 0,
      ...fields,
      id: `up_${randomBase62(24)}`,
      account_id: principal.accountId,
      enabled: true,
      disabled_tools: [],
      tools: [],
      last_contact_at: null,
      last_error: null,
      latency_ms: null,
      created_at: now,
      updated_at: now,
    });
  }

  /** Inserts the row and its `upstream.created` event in one transaction. */
  private async insert(principal: Principal, row: Upstream, actor: string): Promise<void> {
    await underAccountCap(this.upstreams.manager, principal.accountId, Upstream, MAX_UPSTREAMS_PER_ACCOUNT, 'upstreams', async (manager) => {
      if (await manager.exists(Upstream, { where: { account_id: principal.accountId, name: row.name } })) {
        throw new AppException('CONFLICT', `An upstream named '${row.name}' exists: pick another name or delete it first`, { details: { parameter: 'name' } });
      }
      await manager.insert(Upstream, row as QueryDeepPartialEntity<Upstream>); // jsonb columns: stored as they are
      await this.audit.record(manager, { upstream: row, action: 'upstream.created', actor, details: registrationDetails(row) }, row.created_at);
    });
    this.recent.delete(principal.accountId);
  }

  /** The document at spec_url through the egress policy: at most MAX_SPEC_BYTES, no redirect followed; any failure a 400 naming spec_url. */
  private async fetchedDocument(specUrl: string): Promise<unknown> {
    const signal = AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
    let answer;
    try {
      answer = await createToolHttp(this.egress, signal).request(specUrl, { redirect: 'manual', maxResponseBytes: MAX_SPEC_BYTES, parameter: 'spec_url', headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' } });
    } catch (err) {
      const message = err instanceof ToolError ? err.message : signal.aborted ? `took longer than ${DISCOVERY_TIMEOUT_MS / 1000} s` : (err as Error).message;
      throw AppException.invalidRequest(`spec_url could not be fetched: ${message}`, { parameter: 'spec_url' });
    }
    if (answer.status !== 200) throw AppException.invalidRequest(`spec_url answered HTTP ${answer.status}${answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''}`, { parameter: 'spec_url' });
    if (answer.truncated) throw AppException.invalidRequest(`The document at spec_url is larger than ${MAX_SPEC_BYTES} bytes`, { parameter: 'spec_url' });
    return documentOfText(answer.text(), 'spec_url');
  }

  async list(principal: Principal): Promise<Record<string, unknown>[]> {
    return (await this.upstreams.find({ where: { account_id: principal.accountId }, order: { id: 'ASC' } })).map(upstreamView);
  }

  async get(principal: Principal, id: string): Promise<Record<string, unknown>> {
    return upstreamView(await this.find(principal, id));
  }

  /** Applies the change and records what it changed, in one transaction. */
  async update(principal: Principal, id: string, change: UpstreamChange, now = new Date()): Promise<Record<string, unknown>> {
    const row = await this.findOwn(principal, id);
    const before = { ...row };
    const off = new Set(row.disabled_tools);
    for (const [name, on] of Object.entries(change.tools_enabled ?? {})) {
      if (!row.tools.some((tool) => tool.name === name)) throw AppException.invalidRequest(`Upstream '${row.name}' has no tool '${name}'`, { parameter: `tools_enabled.${name}` });
      if (on) off.delete(name);
      else off.add(name);
    }
    Object.assign(row, { enabled: change.enabled ?? row.enabled, disabled_tools: [...off].sort(), cache_ttl_seconds: change.cache_ttl ?? row.cache_ttl_seconds, updated_at: now });
    await this.upstreams.manager.transaction(async (manager) => {
      await manager.update(Upstream, { id: row.id }, { enabled: row.enabled, disabled_tools: row.disabled_tools, cache_ttl_seconds: row.cache_ttl_seconds, updated_at: now } as QueryDeepPartialEntity<Upstream>);
      for (const event of changeEvents(before, row)) await this.audit.record(manager, { upstream: row, actor: principal.keyId, ...event }, now);
    });
    if (row.shared) this.recent.clear();
    else this.recent.delete(principal.accountId);
    this.announce(row, row.tools.map((tool) => tool.name));
    return upstreamView(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const row = await this.findOwn(principal, id);
    await this.deleteRecorded(row, principal.keyId);
    await this.stdio.stop(row.id);
    this.recent.delete(principal.accountId);
    this.announce(row, row.tools.map((tool) => tool.name));
  }

  /** Deletes the row and records `upstream.deleted` in one transaction. */
  private async deleteRecorded(row: Upstream, actor: string): Promise<void> {
    await this.upstreams.manager.transaction(async (manager) => {
      await manager.delete(Upstream, { id: row.id });
      await this.audit.record(manager, { upstream: row, action: 'upstream.deleted', actor });
    });
  }

  /** The audit log of the account's upstreams, or of one of them (docs/upstreams.md#audit-log); an upstream never its account's and never logged is a 404. */
  async auditLog(principal: Principal, filter: AuditFilter, limit: number, offset: number): Promise<{ events: Record<string, unknown>[]; total: number }> {
    const page = await this.audit.page(principal.accountId, filter, limit, offset);
    if (filter.upstreamId && page.total === 0 && !(await this.upstreams.exists({ where: { id: filter.upstreamId, account_id: principal.accountId } }))) throw AppException.notFound('Upstream', filter.upstreamId);
    return page;
  }

  /**
   * An operator command's read of the audit log: the operator-wide upstreams' own events, or with
   * an account, that account's.
   */
  operatorAuditLog(accountId: string | null, filter: AuditFilter, limit: number, offset: number): Promise<{ events: Record<string, unknown>[]; total: number }> {
    return this.audit.page(accountId, filter, limit, offset);
  }

  /**
   * Discovers again, in the background, up to `limit` enabled upstreams whose record is older than
   * `intervalMs` (docs/upstreams.md#staying-current): each is claimed by moving its `updated_at`
   * where it still holds the value read, so among any number of processes one refreshes it.
   * Inline OpenAPI documents have nothing to fetch again. Answers how many it refreshed.
   */
  async refreshDue(intervalMs: number, limit: number, now = new Date()): Promise<number> {
    const due = await this.upstreams.find({
      where: [
        { enabled: true, transport: Not('openapi'), updated_at: LessThan(new Date(now.getTime() - intervalMs)) },
        { enabled: true, transport: 'openapi', spec_url: Not(IsNull()), updated_at: LessThan(new Date(now.getTime() - intervalMs)) },
      ],
      order: { updated_at: 'ASC' },
      take: limit,
    });
    let refreshed = 0;
    for (const row of due) {
      if (row.transport === 'stdio' && !this.stdio.enabled) continue; // nothing to start while the switch is off
      if (await this.claimedDiscovery(row, now)) refreshed += 1;
    }
    return refreshed;
  }

  /** Enabled MCP upstreams over HTTP, oldest first: the ones whose tool lists UpstreamWatcher hears. */
  watchable(limit: number): Promise<Upstream[]> {
    return this.upstreams.find({ where: { enabled: true, transport: 'streamable-http' }, order: { created_at: 'ASC' }, take: limit });
  }

  /** How to reach an HTTP upstream with its owner's credential, every request under the egress policy. */
  async connectionOf(row: Upstream, signal: AbortSignal): Promise<UpstreamConnection> {
    const bearer = 'bearer_secret_name' in row.auth ? await this.secrets.find(row.account_id, row.auth.bearer_secret_name) : undefined;
    if ('bearer_secret_name' in row.auth && bearer === undefined) throw new Error(`secret '${row.auth.bearer_secret_name}' is not set (PUT /v1/secrets/${row.auth.bearer_secret_name})`);
    return { url: row.url, bearer, fetch: createToolHttp(this.egress, signal).fetch, signal };
  }

  /**
   * Discovers the upstream again because it said its tools changed (docs/upstreams.md#staying-current):
   * every process that hears it tries; the one that moves its `updated_at` first discovers, the
   * others find it refreshed within HEARD_CLAIM_MS and look once more after that window, in case
   * the change came after that refresh had listed the tools.
   */
  async heardToolsChanged(id: string): Promise<void> {
    try {
      if (await this.rediscoverHeard(id)) return;
      await new Promise((resolve) => setTimeout(resolve, HEARD_CLAIM_MS + 500).unref());
      await this.rediscoverHeard(id);
    } catch (err) {
      this.logger.warn(`upstream ${id}: discovery after tools/list_changed failed: ${(err as Error).message}`);
    }
  }

  private async rediscoverHeard(id: string, now = new Date()): Promise<boolean> {
    const row = await this.upstreams.findOneBy({ id, enabled: true });
    if (!row || now.getTime() - row.updated_at.getTime() < HEARD_CLAIM_MS) return false;
    return this.claimedDiscovery(row, now);
  }

  /** Discovers the upstream if this process claims it first: its `updated_at` moved where it still holds the value read. */
  private async claimedDiscovery(row: Upstream, now: Date): Promise<boolean> {
    const claimed = await this.upstreams.update({ id: row.id, updated_at: row.updated_at }, { updated_at: now });
    if (!claimed.affected) return false;
    await this.discover(row);
    return true;
  }

  /** Lists the upstream's tools again (initialize + tools/list) and records how that went. */
  async refresh(principal: Principal, id: string): Promise<Record<string, unknown>> {
    const row = await this.find(principal, id);
    await this.discover(row);
    return upstreamView(row);
  }

  /** Every upstream's health for the metrics (docs/upstreams.md#metrics): enabled and last discovered without error is up. */
  async health(): Promise<UpstreamHealth[]> {
    // Counted in the database: the tools' schemas are not read at each scrape.
    const rows: Array<{ id: string; tools: number; up: boolean; last_contact: number | null }> = await this.upstreams.query(
      `SELECT id, jsonb_array_length(tools) AS tools, (enabled AND last_error IS NULL AND last_contact_at IS NOT NULL) AS up,
              extract(epoch FROM last_contact_at)::float8 AS last_contact
         FROM upstreams`,
    );
    return rows.map((row) => ({ id: row.id, tools: Number(row.tools), up: row.up, lastContactSeconds: row.last_contact === null ? null : Number(row.last_contact) }));
  }

  /** Which of these upstream ids still exist. */
  async existing(ids: string[]): Promise<Set<string>> {
    return new Set((await this.upstreams.find({ select: { id: true }, where: { id: In(ids) } })).map((row) => row.id));
  }

  /** The account's enabled upstream tools that the key may use, as the runner runs them. */
  async toolsOf(principal: Principal): Promise<RegisteredTool[]> {
    return (await this.enabledUpstreams(principal.accountId)).flatMap((upstream) => enabledTools(upstream).map((tool) => registeredUpstreamTool(upstream, tool, this.calls))).filter((tool) => canUseTool(principal, tool.definition.id));
  }

  /**
   * The account's enabled upstreams and the shared ones (an account's own shadows a shared one of
   * its name; stdio ones only while UPSTREAMS_STDIO is on), read at most once a FRESH_MS per
   * process (listings and calls alike) unless `fresh`.
   */
  private async enabledUpstreams(accountId: string, fresh = false): Promise<Upstream[]> {
    const now = Date.now();
    let entry = this.recent.get(accountId);
    if (!entry || fresh || now - entry.at > FRESH_MS) {
      if (this.recent.size > 10_000) this.recent.clear();
      const rows = await this.upstreams.find({ where: [{ account_id: accountId, enabled: true }, { shared: true, enabled: true }], order: { name: 'ASC' } });
      const own = new Set(rows.filter((row) => row.account_id === accountId).map((row) => row.name));
      const upstreams = rows.filter((row) => (row.account_id === accountId || !own.has(row.name)) && (row.transport !== 'stdio' || this.stdio.enabled));
      entry = { at: now, upstreams };
      this.recent.set(accountId, entry);
    }
    return entry.upstreams;
  }

  /** One upstream tool by its id (`<upstream>.<tool>`), or undefined when the account has none such the key may use. */
  async toolById(principal: Principal, toolId: string): Promise<RegisteredTool | undefined> {
    return canUseTool(principal, toolId) ? this.toolOfAccount(principal.accountId, toolId) : undefined;
  }

  /**
   * A tool found in the account's recent upstream list; one it lacks is looked for again in a fresh
   * read, so a call queued just after a registration finds its tool on a worker that read the list
   * a moment before.
   */
  private async toolOfAccount(accountId: string, toolId: string): Promise<RegisteredTool | undefined> {
    const dot = toolId.indexOf('.');
    if (dot <= 0) return undefined;
    const find = (upstreams: Upstream[]) => {
      const upstream = upstreams.find(({ name }) => name === toolId.slice(0, dot));
      const tool = upstream && enabledTools(upstream).find(({ name }) => name === toolId.slice(dot + 1));
      return tool ? registeredUpstreamTool(upstream, tool, this.calls) : undefined;
    };
    return find(await this.enabledUpstreams(accountId)) ?? find(await this.enabledUpstreams(accountId, true));
  }

  private async find(principal: Principal, id: string): Promise<Upstream> {
    const row = await this.upstreams.findOne({ where: { id, account_id: principal.accountId } });
    if (!row) throw AppException.notFound('Upstream', id);
    return row;
  }

  /** One the account registered itself: an operator's is changed only by operator commands. */
  private async findOwn(principal: Principal, id: string): Promise<Upstream> {
    const row = await this.find(principal, id);
    if (row.operator_registered) throw new AppException('FORBIDDEN', `Upstream '${row.name}' was registered by the operator: only operator commands change or remove it`);
    return row;
  }

  /** A stdio upstream's process with the owning account's secrets in its environment; a missing one is an error naming it. */
  private async stdioStart(row: Upstream): Promise<StdioStart> {
    const spec = row.stdio!;
    const secrets: Record<string, string> = {};
    for (const [variable, name] of Object.entries(spec.env_from_secrets)) {
      const value = await this.secrets.find(row.account_id, name);
      if (value === undefined) throw new ToolError(`Upstream '${row.name}' needs the secret '${name}' (for ${variable}), which is not set`, { details: { upstream: row.name } });
      secrets[variable] = value;
    }
    if ('image' in spec && !this.stdio.containers) throw new ToolError(`Upstream '${row.name}' runs an image, and images are off on this service (UPSTREAMS_STDIO_DOCKER_HOST)`, { details: { upstream: row.name } });
    const container = this.stdio.containers && { settings: this.stdio.containers, upstreamId: row.id };
    return { process: stdioProcessOf(spec, secrets, container), secretValues: Object.values(secrets) };
  }

  private async discover(row: Upstream): Promise<void> {
    if (row.transport === 'openapi') return this.rereadDocument(row);
    const started = Date.now();
    const signal = AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
    let tools: DiscoveredTool[] | null = null;
    let error: string | null = null;
    try {
      const listed = row.transport === 'stdio'
        ? await this.stdio.use(row, () => this.stdioStart(row), signal, (client) => listedTools(client, signal))
        : await discoverTools(await this.connectionOf(row, signal));
      tools = listed.filter((tool) => kept(row.tool_filter, tool.name));
    } catch (err) {
      error = unreachable(row, err).message.slice(0, 500);
    }
    const now = new Date();
    const fields = tools ? { tools, last_contact_at: now, last_error: null, latency_ms: now.getTime() - started } : { last_error: error };
    await this.recorded(row, fields, now);
  }

  /** An OpenAPI upstream's document fetched again and its operations re-read; a failure is recorded, the tools kept. */
  private async rereadDocument(row: Upstream): Promise<void> {
    if (!row.spec_url) throw AppException.invalidRequest(`Upstream '${row.name}' was registered with an inline spec: register it again to change its operations`, { parameter: 'spec' });
    const started = Date.now();
    let fields: Partial<Upstream>;
    try {
      const tools = operationTools(await dereferencedDocument(await this.fetchedDocument(row.spec_url)), row.tool_filter.include ?? []);
      fields = { tools, last_contact_at: new Date(), last_error: null, latency_ms: Date.now() - started };
    } catch (err) {
      fields = { last_error: (err as Error).message.slice(0, 500) };
    }
    await this.recorded(row, fields, new Date());
  }

  /** What a discovery found; tools that came, went or changed their schema are announced. */
  private async recorded(row: Upstream, fields: Partial<Upstream>, now: Date): Promise<void> {
    const before = row.tools;
    Object.assign(row, fields, { updated_at: now });
    await this.upstreams.update({ id: row.id }, { ...fields, updated_at: now } as QueryDeepPartialEntity<Upstream>);
    if (row.shared) this.recent.clear();
    else this.recent.delete(row.account_id);
    if (fields.tools) this.announce(row, changedToolNames(before, fields.tools));
  }

  /** Tells the account's MCP `subscriptions/listen` streams (every account's, for a shared upstream), on every API process, that these upstream tools changed. */
  private announce(row: Upstream, toolNames: readonly string[]): void {
    this.changes.announce({ accountId: row.shared ? EVERY_ACCOUNT : row.account_id, toolIds: toolNames.map((name) => upstreamToolId(row, name)) });
  }
}

/** The names of the tools new, gone, or described differently between two discoveries (keys in any order: jsonb keeps its own). */
function changedToolNames(before: readonly DiscoveredTool[], after: readonly DiscoveredTool[]): string[] {
  const [was, is] = [before, after].map((tools) => new Map(tools.map((tool) => [tool.name, canonicalJson(tool)])));
  return [...new Set([...was.keys(), ...is.keys()])].filter((name) => was.get(name) !== is.get(name));
}
