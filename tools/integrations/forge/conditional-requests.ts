import { LRUCache } from 'lru-cache';

/** All validators of the process: answers are kept whole, so the cache is bounded by bytes. */
const MAX_BYTES = 32 * 1024 * 1024;
/** A larger answer is not kept: reading it again costs less than holding it. */
const MAX_ENTRY_BYTES = 1024 * 1024;
/** Headers that described the stored bytes on the wire, not the text kept here. */
const WIRE_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding']);

interface StoredAnswer {
  etag: string;
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/**
 * Conditional requests: a GET repeated with the same credential, URL and Accept header sends
 * `If-None-Match` with the ETag of the previous answer, and a 304 is served from the stored
 * answer. On GitHub a 304 costs no rate-limit budget, so polling and repeated reads stay cheap.
 */
export class ConditionalRequests {
  private readonly answers = new LRUCache<string, StoredAnswer>({
    maxSize: MAX_BYTES,
    sizeCalculation: (answer, key) => answer.body.length + key.length + 512,
  });

  /** `fetch` that revalidates through this cache; `credential` is an opaque key of the token (never the token). */
  wrap(fetch: typeof globalThis.fetch, credential: string): typeof globalThis.fetch {
    return async (input, init = {}) => {
      if ((init.method ?? 'GET').toUpperCase() !== 'GET') return fetch(input, init);
      const headers = new Headers(init.headers);
      const key = `${credential} ${headers.get('accept') ?? ''} ${String(input)}`;
      const stored = this.answers.get(key);
      if (stored) headers.set('if-none-match', stored.etag);
      const response = await fetch(input, { ...init, headers });
      if (response.status === 304 && stored) return replay(stored, response.headers);
      const etag = response.headers.get('etag');
      if (response.status !== 200 || !etag) return response;
      const body = await response.text();
      const kept = [...response.headers].filter(([name]) => !WIRE_HEADERS.has(name));
      if (body.length <= MAX_ENTRY_BYTES) this.answers.set(key, { etag, status: response.status, headers: kept, body });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: kept });
    };
  }
}

/** The stored answer with the fresh headers of the 304 (rate-limit counters, a renewed ETag). */
function replay(stored: StoredAnswer, fresh: Headers): Response {
  const headers = new Headers(stored.headers);
  for (const [name, value] of fresh) if (!WIRE_HEADERS.has(name)) headers.set(name, value);
  return new Response(stored.body, { status: stored.status, headers });
}
