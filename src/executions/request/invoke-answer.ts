import type { CacheUse } from './invocation.service';

/**
 * What the invoke route answers: its JSON is the body clients get; beside it, the result-cache use
 * that the ResultCacheInterceptor turns into validators (null when the result did not come from
 * the cache or go into it).
 */
export class InvokeAnswer {
  constructor(
    readonly body: Record<string, unknown>,
    readonly cache: CacheUse | null = null,
  ) {}

  toJSON(): Record<string, unknown> {
    return this.body;
  }
}
