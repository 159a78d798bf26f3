/**
 * A loopback OSV API held to OSV's published shapes (https://google.github.io/osv.dev/api/):
 * `POST /v1/querybatch` answers `{ results: [{ vulns: [{ id, modified }], next_page_token? }] }`,
 * one result per query in order, at most 1000 queries (else 400 with a gRPC status body);
 * `GET /v1/vulns/{id}` answers the record or 404. It decides what is affected the way OSV's
 * schema documents it (versions list, SEMVER and ECOSYSTEM ranges with the `semver` and PEP 440
 * libraries), independently of the tool under test. Tests can page, fail or stall it.
 */
import * as pep440 from '@renovatebot/pep440';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as semver from 'semver';

interface StoredRecord {
  id: string;
  modified: string;
  withdrawn?: string;
  affected?: Array<{ package: { ecosystem: string; name: string }; versions?: string[]; ranges?: Array<{ type: string; events: Array<Record<string, string>> }> }>;
}

export interface OsvApiFake {
  /** Versioned root, e.g. http://127.0.0.1:PORT/v1 (what OSV_API_URL holds). */
  url: string;
  /** Every request: method, path and (for batches) how many queries it held. */
  requests: Array<{ method: string; path: string; queries?: number }>;
  /** Vulnerability ids per page of one query's result (OSV pages at 1000). */
  pageSize: number;
  /** Answer every request with this status and a gRPC status body, until cleared. */
  failWith?: { status: number; retryAfter?: string };
  /** Hold every answer until this promise settles. */
  stall?: Promise<void>;
  close(): Promise<void>;
}

const MAX_QUERIES = 1000;

export async function startOsvApiFake(recordsDir: string): Promise<OsvApiFake> {
  const records = loadRecords(recordsDir);
  const fake: OsvApiFake = {
    url: '',
    requests: [],
    pageSize: 1000,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const body = await readBody(req);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
    const url = new URL(req.url ?? '/', 'http://osv');
    const entry: OsvApiFake['requests'][number] = { method: req.method ?? '', path: url.pathname };
    fake.requests.push(entry);
    if (fake.stall) await fake.stall;
    if (fake.failWith) {
      const { status, retryAfter } = fake.failWith;
      return send(status, { code: status === 503 ? 14 : 13, message: 'unavailable' }, retryAfter ? { 'retry-after': retryAfter } : {});
    }
    if (req.method === 'POST' && url.pathname === '/v1/querybatch') {
      const queries = (JSON.parse(body) as { queries?: Array<{ package?: { ecosystem?: string; name?: string }; version?: string; page_token?: string }> }).queries;
      if (!Array.isArray(queries) || queries.length > MAX_QUERIES) return send(400, { code: 3, message: `Too many queries (max ${MAX_QUERIES})` });
      entry.queries = queries.length;
      return send(200, {
        results: queries.map((query) => {
          const ids = records.filter((record) => affects(record, query.package?.ecosystem ?? '', query.package?.name ?? '', query.version ?? ''));
          const start = Number(query.page_token ?? 0);
          const page = ids.slice(start, start + fake.pageSize).map((record) => ({ id: record.id, modified: record.modified }));
          if (page.length === 0) return {};
          return start + fake.pageSize < ids.length ? { vulns: page, next_page_token: String(start + fake.pageSize) } : { vulns: page };
        }),
      });
    }
    const vuln = /^\/v1\/vulns\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && vuln) {
      const record = records.find((candidate) => candidate.id === decodeURIComponent(vuln[1]));
      return record ? send(200, record) : send(404, { code: 5, message: 'Bug not found.' });
    }
    send(404, { code: 5, message: 'Not Found' });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

function loadRecords(directory: string): StoredRecord[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => JSON.parse(readFileSync(path.join(entry.parentPath, entry.name), 'utf8')) as StoredRecord)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

const pypiName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** OSV's IsVulnerable, as its schema documents it. OSV itself serves withdrawn records too. */
function affects(record: StoredRecord, ecosystem: string, name: string, version: string): boolean {
  const same = ecosystem === 'PyPI' ? (a: string, b: string) => pypiName(a) === pypiName(b) : (a: string, b: string) => a === b;
  const plain = ecosystem === 'Go' ? version.replace(/^v/, '') : version;
  const compare = (a: string, b: string) => (ecosystem === 'PyPI' ? pep440.compare(a, b) : semver.compare(a, b));
  return (record.affected ?? []).some((entry) => {
    if (entry.package.ecosystem !== ecosystem || !same(entry.package.name, name)) return false;
    if ((entry.versions ?? []).includes(plain)) return true;
    return (entry.ranges ?? []).some((range) => {
      let vulnerable = false;
      const events = [...range.events].sort((a, b) => {
        const [x, y] = [Object.values(a)[0] as string, Object.values(b)[0] as string];
        return x === '0' ? -1 : y === '0' ? 1 : compare(x, y);
      });
      for (const event of events) {
        if (event.introduced !== undefined && (event.introduced === '0' || compare(plain, event.introduced) >= 0)) vulnerable = true;
        else if (event.fixed !== undefined && compare(plain, event.fixed) >= 0) vulnerable = false;
        else if (event.last_affected !== undefined && compare(plain, event.last_affected) > 0) vulnerable = false;
      }
      return vulnerable;
    });
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
