/**
 * The OSV API (https://google.github.io/osv.dev/api/) through ctx.http: `POST /querybatch` (at
 * most 1000 queries a request; ids and `modified` only, `next_page_token` per query when a page
 * is full) and `GET /vulns/{id}` for each record.
 */
import { ToolError, type ToolHttp } from '@tos/sdk';
import { asOsvRecord, type OsvRecord, type PackageQuery } from './record';

/** OSV's documented cap on queries per batch. */
const BATCH_SIZE = 1000;
/** Pages fetched for one query whose vulnerabilities do not fit a page. */
const MAX_PAGES = 20;
/** Records fetched at once. */
const FETCH_CONCURRENCY = 8;
/** OSV's own response limit over HTTP/1.1. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const SERVICE = 'osv';

interface BatchAnswer {
  results?: Array<{ vulns?: Array<{ id: string; modified?: string }>; next_page_token?: string }>;
}

export class OsvApiClient {
  /** `baseUrl` is the versioned root, e.g. https://api.osv.dev/v1; `parameter` names its setting in errors. */
  constructor(
    private readonly http: ToolHttp,
    private readonly baseUrl: string,
    private readonly parameter = 'OSV_API_URL',
  ) {}

  /** For each query, the ids of the vulnerabilities OSV says affect it (same order as the queries). */
  async vulnerabilityIds(queries: PackageQuery[], onBatch?: (done: number) => void): Promise<string[][]> {
    const ids: string[][] = [];
    for (let start = 0; start < queries.length; start += BATCH_SIZE) {
      const batch = queries.slice(start, start + BATCH_SIZE);
      const answer = await this.queryBatch(batch.map((query) => ({ package: { ecosystem: query.ecosystem, name: query.name }, version: query.version })));
      for (const [index, result] of answer.entries()) {
        const found = (result.vulns ?? []).map((vuln) => vuln.id);
        for (let page = 1, token = result.next_page_token; token; page += 1) {
          if (page >= MAX_PAGES) throw new ToolError(`OSV kept paging past ${MAX_PAGES} pages for ${batch[index].name}`, { details: { upstream: { service: SERVICE } } });
          const query = batch[index];
          const [next] = await this.queryBatch([{ package: { ecosystem: query.ecosystem, name: query.name }, version: query.version, page_token: token }]);
          found.push(...(next.vulns ?? []).map((vuln) => vuln.id));
          token = next.next_page_token;
        }
        ids.push([...new Set(found)]);
      }
      onBatch?.(Math.min(start + BATCH_SIZE, queries.length));
    }
    return ids;
  }

  /** The full records of these ids, fetched a few at a time. */
  async records(ids: string[]): Promise<Map<string, OsvRecord>> {
    const records = new Map<string, OsvRecord>();
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) records.set(id, await this.record(id));
    };
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, queue.length) }, worker));
    return records;
  }

  private async record(id: string): Promise<OsvRecord> {
    const response = await this.http.request(`${this.root()}/vulns/${encodeURIComponent(id)}`, {
      headers: { accept: 'application/json' },
      maxResponseBytes: MAX_RESPONSE_BYTES,
      parameter: this.parameter,
    });
    if (response.status !== 200) throw ToolError.fromResponse(SERVICE, response, `OSV answered HTTP ${response.status} for vulnerability ${id}`);
    return this.checked(() => asOsvRecord(response.json(), `OSV's answer for ${id}`));
  }

  private async queryBatch(queries: unknown[]): Promise<NonNullable<BatchAnswer['results']>> {
    const response = await this.http.request(`${this.root()}/querybatch`, {
      method: 'POST',
      json: { queries },
      headers: { accept: 'application/json' },
      maxResponseBytes: MAX_RESPONSE_BYTES,
      parameter: this.parameter,
    });
    if (response.status !== 200) throw ToolError.fromResponse(SERVICE, response, `OSV answered HTTP ${response.status} to a batch query`);
    if (response.truncated) throw new ToolError(`OSV's answer exceeded ${MAX_RESPONSE_BYTES} bytes`, { details: { upstream: { service: SERVICE, status: 200 } } });
    const results = response.json<BatchAnswer>().results;
    // OSV answers one result per query, in order; anything else cannot be attributed.
    if (!Array.isArray(results) || results.length !== queries.length) {
      throw new ToolError(`OSV answered ${Array.isArray(results) ? results.length : 'no'} results to ${queries.length} queries`, {
        details: { upstream: { service: SERVICE, status: 200 } },
      });
    }
    return results;
  }

  private root(): string {
    return this.baseUrl.replace(/\/+$/, '');
  }

  private checked<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof ToolError) throw error;
      throw new ToolError((error as Error).message, { details: { upstream: { service: SERVICE, status: 200 } } });
    }
  }
}
