import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { countedIn } from '../common/rate-limit-headers';
import type { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';
import type { ResolvedDefinition } from '../tools/tool-catalogue';
import { QuotaStore } from './quota-store';
import { keyWindowKey, rateLimited } from './rate-limit-headers';
import { WINDOW_MS, WindowHit, WindowStore } from './window-store';

/** The per-tool window an admitted call was counted in (for the X-RateLimit-* headers). */
export interface ToolWindow {
  limit: number;
  hit: WindowHit;
}

/**
 * Where the monthly quota starts when its counter is lost (a new process, a Redis flush): the
 * account's calls recorded since the month began. Limits own the question; executions answer it.
 */
export interface QuotaSeed {
  countSince(accountId: string, since: Date): Promise<number>;
}
export const QUOTA_SEED = Symbol('QUOTA_SEED');

/** What a caller has spent: its own request window and its account's month (GET /v1/usage). */
export interface Usage {
  tier: Principal['tier'];
  window: { limit: number; used: number; resets_at: string };
  month: { limit: number | null; used: number; resets_at: string };
}

/** The calendar month (UTC) an account's quota counts in. */
function quotaMonth(accountId: string, now: Date) {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { key: `${accountId}:${start.toISOString().slice(0, 7)}`, start, next };
}

/**
 * The one admission decision for a tool call, whichever door it came through (REST invoke or MCP
 * tools/call): the key's window for that tool (its `rate_limit`), then the account's monthly call
 * quota (docs/API.md#rate-limits-and-quotas). Called once the request is known to be a call: after input validation and
 * after an idempotent replay was answered (a replay is the earlier call's answer, never admitted).
 * A cache hit is a call answered cheaply: admitted like any other.
 */
@Injectable()
export class AdmissionGate {
  constructor(
    private readonly windows: WindowStore,
    private readonly quotas: QuotaStore,
    @Inject(QUOTA_SEED) private readonly seed: QuotaSeed,
  ) {}

  /**
   * Counts one call of `tool` or throws RATE_LIMITED with its retry time. Answers the tool window
   * it was counted in; none for enterprise accounts, which buy their own capacity: their request
   * limit governs, not the shared per-tool one.
   */
  async admit(principal: Principal, tool: ResolvedDefinition): Promise<ToolWindow | null> {
    let window: ToolWindow | null = null;
    if (principal.tier !== 'enterprise') {
      window = { limit: tool.rate_limit, hit: await this.windows.hit(`tool:${principal.keyId}:${tool.id}`, tool.rate_limit, WINDOW_MS) };
      if (!window.hit.allowed) throw rateLimited(`tool ${tool.id}`, tool.rate_limit, Math.ceil((window.hit.resetAt - Date.now()) / 1000));
    }
    await this.consumeQuota(principal);
    return window;
  }

  /**
   * Counts `n` requests beyond the one the request-window guard counted for this HTTP request (the
   * further messages of a JSON-RPC batch), in the same key window: a batch pays per message, as if
   * each were its own POST. As many as fit are counted; `refusal` is the RATE_LIMITED error for the
   * rest (none when all fit). The response's X-RateLimit-* headers show the window.
   */
  async admitMore(principal: Principal, request: FastifyRequest, n: number): Promise<{ admitted: number; refusal?: AppException }> {
    const limit = principal.limits.requestsPerMinute;
    const { taken, count, resetAt } = await this.windows.hitMany(keyWindowKey(principal.keyId), limit, WINDOW_MS, n);
    countedIn(request, limit, count, resetAt);
    if (taken === n) return { admitted: n };
    return { admitted: taken, refusal: rateLimited('API key', limit, Math.ceil((resetAt - Date.now()) / 1000)) };
  }

  /** Reads, never counts: the caller's request window and the account's monthly calls. */
  async usage(principal: Principal, now = new Date()): Promise<Usage> {
    const { limits, accountId } = principal;
    const window = await this.windows.peek(keyWindowKey(principal.keyId), limits.requestsPerMinute, WINDOW_MS);
    const month = quotaMonth(accountId, now);
    const used = await this.quotas.used(month.key, () => this.seed.countSince(accountId, month.start));
    return {
      tier: principal.tier,
      window: { limit: limits.requestsPerMinute, used: window.count, resets_at: new Date(window.resetAt).toISOString() },
      month: { limit: limits.monthlyCalls, used, resets_at: month.next.toISOString() },
    };
  }

  private async consumeQuota({ accountId, limits }: Principal): Promise<void> {
    if (limits.monthlyCalls === null) return;
    const now = new Date();
    const month = quotaMonth(accountId, now);
    const use = await this.quotas.consume(month.key, limits.monthlyCalls, month.next.getTime() - now.getTime() + 86_400_000, () => this.seed.countSince(accountId, month.start));
    if (!use.allowed) throw rateLimited('monthly call quota', limits.monthlyCalls, Math.ceil((month.next.getTime() - now.getTime()) / 1000), 'month');
  }
}
