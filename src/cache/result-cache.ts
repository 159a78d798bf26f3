import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { canonicalJson } from '../common/canonical-json';

export interface CachedResult {
  /** The execution that produced the result. */
  execution_id: string;
  result: Record<string, unknown>;
  /** Validator of `result`, computed once when stored. */
  etag: string;
  /** Epoch ms. */
  stored_at: number;
  expires_at: number;
}

/** docs/API.md#caching: tool id + tool version + canonical validated input + API key id — keys never share entries. */
export function resultCacheKey(apiKeyId: string, toolId: string, toolVersion: string, input: Record<string, unknown>): string {
  const digest = hash('sha256', `${toolVersion}\n${canonicalJson(input)}`, 'base64url');
  return `${cacheScope(apiKeyId, toolId)}:${digest}`;
}

/** Everything one key cached for one tool: what DELETE /v1/tools/{id}/cache drops. */
export function cacheScope(apiKeyId: string, toolId: string): string {
  return `${apiKeyId}:${toolId}`;
}

/** Successful results of cacheable tools, per API key: bounded LRU in memory, or Redis. */
export abstract class ResultCache {
  abstract get(key: string): Promise<CachedResult | null>;
  abstract set(key: string, scope: string, value: CachedResult): Promise<void>;
  /** Drops a scope's entries; answers how many. */
  abstract drop(scope: string): Promise<number>;
}

const MAX_ENTRIES = 10_000;
const MAX_BYTES = 64 * 1024 * 1024;

export class MemoryResultCache extends ResultCache {
  private readonly scopes = new Map<string, Set<string>>();
  private readonly entries = new LRUCache<string, CachedResult & { scope: string }>({
    max: MAX_ENTRIES,
    maxSize: MAX_BYTES,
    sizeCalculation: (value) => JSON.stringify(value.result).length + 200,
    dispose: (value, key) => {
      const keys = this.scopes.get(value.scope);
      keys?.delete(key);
      if (keys?.size === 0) this.scopes.delete(value.scope);
    },
  });

  async get(key: string): Promise<CachedResult | null> {
    return this.entries.get(key) ?? null;
  }

  async set(key: string, scope: string, value: CachedResult): Promise<void> {
    const ttl = value.expires_at - Date.now();
    if (ttl <= 0) return;
    this.entries.set(key, { ...value, scope }, { ttl });
    let keys = this.scopes.get(scope);
    if (!keys) this.scopes.set(scope, (keys = new Set()));
    keys.add(key);
  }

  async drop(scope: string): Promise<number> {
    const keys = [...(this.scopes.get(scope) ?? [])];
    let dropped = 0;
    for (const key of keys) if (this.entries.delete(key)) dropped++;
    return dropped;
  }
}
