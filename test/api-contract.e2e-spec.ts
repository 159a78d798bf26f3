/**
 * The /v1 contract (docs/API.md#contract) against the real application, on PGlite and on PostgreSQL.
 */
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { describeEachDatabase } from './support/databases';
import { TestAccount, useTestApp } from './support/app';
import { TestToolsModule } from './support/test-tools.module';

const KEY_FORMAT = /^sk_(user|svc|temp)_[0-9A-Za-z]{32}$/;
const SAMPLE_LOG = [
  '2026-11-20T10:00:00Z INFO service started',
  '2026-11-20T10:00:01Z ERROR connection to db-7 failed after 3 retries',
  '2026-11-20T10:00:02Z ERROR connection to db-9 failed after 5 retries',
  '2026-11-20T10:00:03Z WARN slow request 1200ms',
].join('\n');

describeEachDatabase('API contract', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule] });
  let other: TestAccount;

  beforeAll(async () => {
    other = await suite.t.createAccount('other');
  });

  const invoke = (toolId: string, payload: unknown, key = suite.acme.key, query = '') =>
    suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload: payload as object });

  describe('schema', () => {
    it('migrations produce exactly the entities (nothing left for migration:generate)', async () => {
      const dataSource = suite.t.app.get(DataSource);
      const pending = await dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    });
  });

  describe('authentication and errors', () => {
    it('401 with WWW-Authenticate for a missing, malformed or unknown key', async () => {
      for (const authorization of [undefined, 'Basic abc', 'Bearer nope', `Bearer sk_svc_${'x'.repeat(32)}`]) {
        const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: authorization ? { authorization } : {} });
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.json().error).toMatchObject({ code: 'UNAUTHORIZED', retryable: false });
      }
    });

    it('answers framework errors in the error envelope, never a stack trace', async () => {
      const badJson = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, headers: { 'content-type': 'application/json' }, payload: '{"a":' });
      expect(badJson.statusCode).toBe(400);
      expect(badJson.json().error.code).toBe('INVALID_REQUEST');

      const wrongType = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, headers: { 'content-type': 'text/plain' }, payload: 'hi' });
      expect(wrongType.statusCode).toBe(415);
      expect(wrongType.json().error.code).toBe('INVALID_REQUEST');

      const tooLarge = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ data: 'x'.repeat(1_100_000) }) });
      expect(tooLarge.statusCode).toBe(413);
      expect(tooLarge.json().error.code).toBe('INVALID_REQUEST');

      const unknownRoute = await suite.t.request({ method: 'GET', url: '/v1/nothing-here', key: suite.acme.key });
      expect(unknownRoute.statusCode).toBe(404);
      expect(unknownRoute.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Route not found', retryable: false } });
      for (const res of [badJson, wrongType, tooLarge, unknownRoute]) expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
    });

    it('puts the security headers and the request id on every response', async () => {
      for (const res of [
        await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: { 'x-request-id': 'trace-123' } }),
        await suite.t.request({ method: 'GET', url: '/v1/unknown', headers: { 'x-request-id': 'trace-123' } }),
      ]) {
        expect(res.headers).toMatchObject({
          'strict-transport-security': 'max-age=31536000',
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'DENY',
          'x-xss-protection': '1; mode=block',
          'x-request-id': 'trace-123',
        });
      }
      const generated = await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: { 'x-request-id': 'bad id with spaces' } });
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('a crashing tool is TOOL_ERROR without its internals', async () => {
      const res = await invoke('test-misbehave', { mode: 'crash' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: "Tool 'test-misbehave' failed unexpectedly", retryable: false, details: { crashed: true } } });
      expect(res.body).not.toContain('internal detail');
    });
  });

  describe('protocol', () => {
    it('API-Version: absent or 1.0 accepted, 0.9 retired (410), others 400; responses say 1.0', async () => {
      for (const version of [undefined, '1.0', '1']) {
        const res = await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: version ? { 'api-version': version } : {} });
        expect(res.statusCode).toBe(200);
        expect(res.headers['api-version']).toBe('1.0');
      }
      const retired = await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: { 'api-version': '0.9' } });
      expect(retired.statusCode).toBe(410);
      expect(retired.json().error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('2026-09-28') });
      const unknown = await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: { 'api-version': '2.0' } });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.message).toContain('1.0');
      expect(unknown.headers['api-version']).toBe('1.0');
    });

    it('serves the /api/skill alias paths with the same handlers, auth included', async () => {
      const list = await suite.t.request({ method: 'GET', url: '/api/skill/tools?category=security', key: suite.acme.key });
      expect(list.json()).toEqual((await suite.t.request({ method: 'GET', url: '/v1/tools?category=security', key: suite.acme.key })).json());
      const invoked = await suite.t.request({ method: 'POST', url: '/api/skill/tools/json-transform/invoke', key: suite.acme.key, payload: { expression: '2*21', data: {} } });
      expect(invoked.json()).toMatchObject({ status: 'success', result: { result: 42 } });
      const status = await suite.t.request({ method: 'GET', url: `/api/skill/status/${invoked.json().execution_id}`, key: suite.acme.key });
      expect(status.json()).toMatchObject({ id: invoked.json().execution_id, status: 'success' });
      expect((await suite.t.request({ method: 'GET', url: '/api/skill/tools' })).statusCode).toBe(401);
    });

    it('gzips answers over 1 KB when accepted, and accepts gzip request bodies', async () => {
      const big = await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key, headers: { 'accept-encoding': 'gzip' } });
      expect(big.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(big.rawPayload).toString()).tools.length).toBeGreaterThan(0);
      const small = await suite.t.request({ method: 'GET', url: '/healthz', headers: { 'accept-encoding': 'gzip' } });
      expect(small.headers['content-encoding']).toBeUndefined();

      const zipped = await suite.t.request({
        method: 'POST',
        url: '/v1/tools/json-transform/invoke',
        key: suite.acme.key,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: gzipSync(JSON.stringify({ expression: '6*7', data: {} })),
      });
      expect(zipped.json()).toMatchObject({ status: 'success', result: { result: 42 } });
      const unsupported = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, headers: { 'content-type': 'application/json', 'content-encoding': 'compress' }, payload: 'x' });
      expect(unsupported.statusCode).toBe(415);
    });

    it('cuts a gzip bomb off at 1 MiB inflated: 413, without memory growth', async () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));
      expect(bomb.length).toBeLessThan(1024 * 1024);
      const before = process.memoryUsage().rss;
      const res = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: bomb });
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe('INVALID_REQUEST');
      expect(process.memoryUsage().rss - before).toBeLessThan(32 * 1024 * 1024);
    });

    it('healthz and readyz are public and outside /v1', async () => {
      expect((await suite.t.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      const ready = await suite.t.request({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', queue: 'ok' } });
    });
  });

  describe('keys', () => {
    it('creates keys of each type in the right format, shows the secret once, never the hash', async () => {
      for (const [type, prefix] of [['user', 'sk_user_'], ['service', 'sk_svc_'], ['svc', 'sk_svc_'], ['temp', 'sk_temp_']] as const) {
        const res = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: `k-${type}`, type, ...(type === 'temp' && { expires_in: 3600 }) } });
        expect(res.statusCode).toBe(201);
        const body = res.json();
        expect(body.key).toMatch(KEY_FORMAT);
        expect(body.key.startsWith(prefix)).toBe(true);
        expect(body.prefix).toBe(body.key.slice(0, 12));
        expect(body.id).toMatch(/^key_/);
        expect(body).not.toHaveProperty('secret_hash');
        const listed = await suite.t.request({ method: 'GET', url: '/v1/keys?limit=100', key: suite.acme.key });
        const item = listed.json().keys.find((k: { id: string }) => k.id === body.id);
        expect(item).toBeDefined();
        expect(JSON.stringify(listed.json())).not.toContain(body.key);
        expect(item).not.toHaveProperty('key');
      }
    });

    it('temporary keys need expires_in ≤ 24 h, lack keys:manage, cannot be revoked, and expire', async () => {
      expect((await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 't', type: 'temporary' } })).statusCode).toBe(400);
      expect((await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 't', type: 'temporary', expires_in: 86_401 } })).statusCode).toBe(400);
      const created = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 't', type: 'temporary', expires_in: 60 } })).json();
      expect(created.scopes).not.toContain('keys:manage');
      const asTemp = await suite.t.request({ method: 'POST', url: '/v1/keys', key: created.key, payload: { name: 'x', type: 'user' } });
      expect(asTemp.statusCode).toBe(403);
      const revoke = await suite.t.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, key: suite.acme.key });
      expect(revoke.statusCode).toBe(403);
      expect(revoke.json().error.message).toContain(created.expires_at);

      const expired = await suite.t.createKey(suite.acme.id, { name: 'old', type: 'temporary', expires_in: 1 }, new Date(Date.now() - 5_000));
      const res = await suite.t.request({ method: 'GET', url: '/v1/tools', key: expired });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.message).toMatch(/expired/);
    });

    it('a revoked key stops working at once, even though verified keys are cached', async () => {
      const created = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'to-revoke', type: 'service' } })).json();
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: created.key })).statusCode).toBe(200);
      const revoked = await suite.t.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, key: suite.acme.key });
      expect(revoked.statusCode).toBe(200);
      expect(revoked.json().revoked_at).not.toBeNull();
      const after = await suite.t.request({ method: 'GET', url: '/v1/tools', key: created.key });
      expect(after.statusCode).toBe(401);
      expect(after.json().error.message).toMatch(/revoked/);
    });

    it('regenerating a user key revokes the old secret at once', async () => {
      const user = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'dev', type: 'user' } })).json();
      const res = await suite.t.request({ method: 'POST', url: `/v1/keys/${user.id}/regenerate`, key: suite.acme.key });
      expect(res.statusCode).toBe(201);
      const fresh = res.json();
      expect(fresh.key).toMatch(/^sk_user_/);
      expect(fresh.replaces_key_id).toBe(user.id);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: user.key })).statusCode).toBe(401);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: fresh.key })).statusCode).toBe(200);
      const svc = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'svc', type: 'service' } })).json();
      expect((await suite.t.request({ method: 'POST', url: `/v1/keys/${svc.id}/regenerate`, key: suite.acme.key })).statusCode).toBe(400);
    });

    it('rotating a service key keeps the old one valid until revoke_old_after', async () => {
      const svc = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'prod', type: 'service' } })).json();
      const rotated = (await suite.t.request({ method: 'POST', url: `/v1/keys/${svc.id}/rotate`, key: suite.acme.key, payload: {} })).json();
      expect(rotated.key).toMatch(/^sk_svc_/);
      expect(rotated.old_key).toMatchObject({ id: svc.id, revoked_at: null });
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: svc.key })).statusCode).toBe(200);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: rotated.key })).statusCode).toBe(200);

      const again = (await suite.t.request({ method: 'POST', url: `/v1/keys/${rotated.id}/rotate`, key: suite.acme.key, payload: { revoke_old_after: 0 } })).json();
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: rotated.key })).statusCode).toBe(401);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: again.key })).statusCode).toBe(200);
    });

    it('a key never grants more than it holds', async () => {
      const narrow = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'n', type: 'service', scopes: ['keys:manage', 'tools:read'], tool_ids: ['json-transform'] } })).json();
      const widerScope = await suite.t.request({ method: 'POST', url: '/v1/keys', key: narrow.key, payload: { name: 'w', type: 'service', scopes: ['tools:invoke'] } });
      expect(widerScope.statusCode).toBe(403);
      const widerTools = await suite.t.request({ method: 'POST', url: '/v1/keys', key: narrow.key, payload: { name: 'w', type: 'service', scopes: ['tools:read'], tool_ids: ['log-analysis'] } });
      expect(widerTools.statusCode).toBe(403);
      const inherited = await suite.t.request({ method: 'POST', url: '/v1/keys', key: narrow.key, payload: { name: 'w', type: 'service', scopes: ['tools:read'] } });
      expect(inherited.statusCode).toBe(201);
      expect(inherited.json().tool_ids).toEqual(['json-transform']);
      const unknownTool = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'u', type: 'service', tool_ids: ['no-such-tool'] } });
      expect(unknownTool.statusCode).toBe(400);
    });

    it('validates the create body', async () => {
      const res = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'x', type: 'admin' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'type' } });
    });

    it("another account's keys are invisible (404)", async () => {
      const mine = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'mine', type: 'service' } })).json();
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/keys/${mine.id}`, key: other.key })).statusCode).toBe(404);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: mine.key })).statusCode).toBe(200);
    });
  });

  describe('catalogue', () => {
    it('lists the built-in tools and the extension module tools, with filters and paging', async () => {
      const all = (await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key })).json();
      const ids = all.tools.map((tool: { id: string }) => tool.id);
      expect(ids).toEqual(expect.arrayContaining(['log-analysis', 'json-transform', 'secret-scan', 'test-sleep', 'test-misbehave']));
      expect(all).toMatchObject({ total: ids.length, limit: 50, offset: 0 });
      const tool = all.tools.find((x: { id: string }) => x.id === 'log-analysis');
      expect(tool).toMatchObject({ category: 'analysis', status: 'ready', rate_limit: expect.stringMatching(/^\d+ calls\/min$/), timeout: expect.stringMatching(/^\d+s$/) });
      expect(tool).not.toHaveProperty('examples');

      const security = (await suite.t.request({ method: 'GET', url: '/v1/tools?category=security', key: suite.acme.key })).json();
      expect(security.tools.map((x: { id: string }) => x.id)).toContain('secret-scan');
      expect(security.tools.every((x: { category: string }) => x.category === 'security')).toBe(true);
      const searched = (await suite.t.request({ method: 'GET', url: '/v1/tools?search=JSONATA', key: suite.acme.key })).json();
      expect(searched.tools.map((x: { id: string }) => x.id)).toEqual(['json-transform']);
      const page = (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=2&offset=1', key: suite.acme.key })).json();
      expect(page.tools.map((x: { id: string }) => x.id)).toEqual(ids.slice(1, 3));
      expect(page.total).toBe(ids.length);
    });

    describe('the listing at wire speed (docs/API.md#listing-tools)', () => {
      const list = (key: string, headers: Record<string, string> = {}, query = '') => suite.t.request({ method: 'GET', url: `/v1/tools${query}`, key, headers });

      it('serves gzip and brotli forms that decode to exactly the identity bytes, chosen by Accept-Encoding q-values', async () => {
        const identity = await list(suite.acme.key, { 'accept-encoding': 'identity' });
        expect(identity.headers['content-encoding']).toBeUndefined();
        expect(identity.headers.vary).toMatch(/accept-encoding/i);
        const gzip = await list(suite.acme.key, { 'accept-encoding': 'gzip' });
        expect(gzip.headers['content-encoding']).toBe('gzip');
        expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload)).toBe(true);
        const br = await list(suite.acme.key, { 'accept-encoding': 'gzip, deflate, br' });
        expect(br.headers['content-encoding']).toBe('br');
        expect(brotliDecompressSync(br.rawPayload).equals(identity.rawPayload)).toBe(true);
        expect((await list(suite.acme.key, { 'accept-encoding': 'br;q=0.5, gzip;q=0.8' })).headers['content-encoding']).toBe('gzip');
        expect((await list(suite.acme.key, { 'accept-encoding': 'br;q=0, gzip;q=0' })).headers['content-encoding']).toBeUndefined();
        expect((await list(suite.acme.key, { 'accept-encoding': 'deflate' })).headers['content-encoding']).toBeUndefined();
        expect((await list(suite.acme.key, { 'accept-encoding': '*' })).headers['content-encoding']).toBe('br');
        expect((await list(suite.acme.key, { 'accept-encoding': 'gzip;q=0.2, identity;q=0.5' })).headers['content-encoding']).toBeUndefined();
        for (const res of [identity, gzip, br]) {
          expect(res.statusCode).toBe(200);
          expect(res.headers.etag).toMatch(/^"[^"]+"$/);
        }
      });

      it('answers a matching If-None-Match with 304, no body and the same ETag, rate limit headers still written', async () => {
        for (const encoding of ['identity', 'gzip', 'br']) {
          const first = await list(suite.acme.key, { 'accept-encoding': encoding });
          const again = await list(suite.acme.key, { 'accept-encoding': encoding, 'if-none-match': first.headers.etag as string });
          expect(again.statusCode).toBe(304);
          expect(again.rawPayload.length).toBe(0);
          expect(again.headers.etag).toBe(first.headers.etag);
          expect(again.headers['x-ratelimit-remaining']).toBeDefined();
        }
        expect((await list(suite.acme.key, { 'if-none-match': '"stale"' })).statusCode).toBe(200);
        expect((await list('sk_svc_' + '0'.repeat(32), { 'if-none-match': '*' })).statusCode).toBe(401);
      });

      it("a narrowed key gets its own listing and ETag, never another visibility's bytes", async () => {
        const narrowed = await suite.t.createKey(suite.acme.id, { name: 'narrow', type: 'service', tool_ids: ['json-transform'] });
        const narrowedToo = await suite.t.createKey(suite.acme.id, { name: 'narrow-2', type: 'service', tool_ids: ['json-transform'] });
        for (const encoding of ['identity', 'gzip', 'br']) {
          const full = await list(suite.acme.key, { 'accept-encoding': encoding });
          const mine = await list(narrowed, { 'accept-encoding': encoding });
          expect(mine.headers.etag).not.toBe(full.headers.etag);
          expect(mine.rawPayload.equals(full.rawPayload)).toBe(false);
          expect((await list(narrowed, { 'accept-encoding': encoding, 'if-none-match': full.headers.etag as string })).statusCode).toBe(200);
          expect((await list(narrowedToo, { 'accept-encoding': encoding, 'if-none-match': mine.headers.etag as string })).statusCode).toBe(304);
        }
        const plain = (await list(narrowed, { 'accept-encoding': 'identity' })).json();
        expect(plain.tools.map((x: { id: string }) => x.id)).toEqual(['json-transform']);
      });

      it('?view=compact gives each input and output as its type name; an unknown view is a 400', async () => {
        const compact = (await list(suite.acme.key, {}, '?view=compact')).json();
        const full = (await list(suite.acme.key)).json();
        expect(compact.total).toBe(full.total);
        const tool = compact.tools.find((x: { id: string }) => x.id === 'json-transform');
        const fullTool = full.tools.find((x: { id: string }) => x.id === 'json-transform');
        expect(tool.inputs).toMatchObject({ expression: 'string', data: 'any' });
        for (const side of ['inputs', 'outputs']) {
          expect(Object.keys(tool[side])).toEqual(Object.keys(fullTool[side]));
          for (const [name, type] of Object.entries(tool[side])) expect(type).toBe(fullTool[side][name].type);
        }
        expect(tool).toMatchObject({ id: 'json-transform', name: fullTool.name, category: fullTool.category, rate_limit: fullTool.rate_limit, timeout: fullTool.timeout });
        expect((await list(suite.acme.key, {}, '?view=full')).body).toBe((await list(suite.acme.key)).body);

        const bad = await list(suite.acme.key, {}, '?view=tiny');
        expect(bad.statusCode).toBe(400);
        expect(bad.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'view' } });
      });
    });

    it('rejects bad list parameters with 400 naming the parameter', async () => {
      for (const [query, parameter] of [['category=nope', 'category'], ['status=gone', 'status'], ['limit=101', 'limit'], ['limit=0', 'limit'], ['offset=-1', 'offset'], ['limit=abc', 'limit']]) {
        const res = await suite.t.request({ method: 'GET', url: `/v1/tools?${query}`, key: suite.acme.key });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter } });
      }
    });

    it('reads one tool with examples and a documentation page that exists', async () => {
      const res = await suite.t.request({ method: 'GET', url: '/v1/tools/secret-scan', key: suite.acme.key });
      expect(res.statusCode).toBe(200);
      const tool = res.json();
      expect(tool.examples.length).toBeGreaterThan(0);
      const docsPath = new URL(tool.documentation).pathname;
      const docs = await suite.t.request({ method: 'GET', url: docsPath });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toMatch(/text\/markdown/);
      expect(docs.body).toContain('# ');
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools/no-such-tool', key: suite.acme.key })).json().error.code).toBe('NOT_FOUND');
    });

    it('an unknown tool id names the closest ones', async () => {
      const typo = (await suite.t.request({ method: 'GET', url: '/v1/tools/secret-scna', key: suite.acme.key })).json().error;
      expect(typo).toMatchObject({ code: 'NOT_FOUND', details: { did_you_mean: ['secret-scan'] }, suggestion: expect.stringContaining("'secret-scan'") });
      const invoked = await suite.t.request({ method: 'POST', url: '/v1/tools/jsontransform/invoke', key: suite.acme.key, payload: { expression: '1', data: {} } });
      expect(invoked.statusCode).toBe(404);
      expect(invoked.json().error.details.did_you_mean).toEqual(['json-transform']);
      const far = (await suite.t.request({ method: 'GET', url: '/v1/tools/zzzzzzzz', key: suite.acme.key })).json().error;
      expect(far.details).toBeUndefined();
      expect(far.suggestion).toBeUndefined();
    });

    it('a key restricted to some tools sees and uses only those (403 otherwise)', async () => {
      const restricted = await suite.t.createKey(suite.acme.id, { name: 'r', type: 'service', tool_ids: ['json-transform'] });
      const list = (await suite.t.request({ method: 'GET', url: '/v1/tools', key: restricted })).json();
      expect(list.tools.map((x: { id: string }) => x.id)).toEqual(['json-transform']);
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools/log-analysis', key: restricted })).statusCode).toBe(403);
      const denied = await invoke('log-analysis', { content: SAMPLE_LOG }, restricted);
      expect(denied.statusCode).toBe(403);
      expect(denied.json().error.code).toBe('FORBIDDEN');
      expect((await invoke('json-transform', { expression: '1+1', data: {} }, restricted)).statusCode).toBe(200);
    });

    it('a key without a scope gets 403', async () => {
      const readOnly = await suite.t.createKey(suite.acme.id, { name: 'ro', type: 'service', scopes: ['tools:read'] });
      expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: readOnly })).statusCode).toBe(200);
      const res = await invoke('json-transform', { expression: '1', data: {} }, readOnly);
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toContain('tools:invoke');
      expect((await suite.t.request({ method: 'GET', url: '/v1/executions', key: readOnly })).statusCode).toBe(403);
      expect((await suite.t.request({ method: 'GET', url: '/v1/keys', key: readOnly })).statusCode).toBe(403);
    });
  });

  describe('invoke', () => {
    it('runs log-analysis on a sample and the execution is readable', async () => {
      const res = await invoke('log-analysis', { content: SAMPLE_LOG });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ status: 'success', execution_id: expect.stringMatching(/^exec_[0-9A-Za-z]{24}$/) });
      expect(body.result.levels).toMatchObject({ error: 2, info: 1, warn: 1 });
      expect(body.result.error_groups[0].count).toBe(2);
      const { total_ms, execution_ms, processing_ms } = body.timing;
      expect(total_ms).toBeGreaterThanOrEqual(execution_ms);
      expect(processing_ms).toBeCloseTo(total_ms - execution_ms, 1);

      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${body.execution_id}`, key: suite.acme.key })).json();
      expect(execution).toMatchObject({ id: body.execution_id, tool_id: 'log-analysis', status: 'success', progress: 100, result: body.result });
      expect(Date.parse(execution.completed_at)).toBeGreaterThanOrEqual(Date.parse(execution.started_at));
      expect(execution.duration_ms).toBe(Date.parse(execution.completed_at) - Date.parse(execution.started_at));
    });

    it('refuses log-analysis with neither content nor path before an execution exists', async () => {
      const count = async () => (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=log-analysis&limit=1', key: suite.acme.key })).json().total as number;
      const before = await count();
      const res = await invoke('log-analysis', {});
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', message: "Missing required parameter: give exactly one of 'content' or 'path'", details: { parameter: 'content' } });
      expect(res.json()).not.toHaveProperty('execution_id');
      expect(await count()).toBe(before);
    });

    it('accepts the envelope shape, applies defaults and strips unknown members', async () => {
      const res = await invoke('log-analysis', { tool_id: 'log-analysis', inputs: { content: SAMPLE_LOG, surprise: 1 }, options: { timeout: 20 } });
      expect(res.statusCode).toBe(200);
      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${res.json().execution_id}`, key: suite.acme.key })).json();
      expect(execution.input).not.toHaveProperty('surprise');
      expect(execution.input.format).toBe('auto');
    });

    it('envelope tool_id must match the path', async () => {
      const res = await invoke('log-analysis', { tool_id: 'json-transform', inputs: { content: 'x' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'tool_id' } });
    });

    it('missing input → INVALID_REQUEST naming it; wrong input → INVALID_INPUT with details', async () => {
      const missing = await invoke('json-transform', { data: {} });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().error).toMatchObject({ code: 'INVALID_REQUEST', message: 'Missing required parameter: expression', details: { parameter: 'expression' } });

      const wrong = await invoke('json-transform', { expression: 42, data: {} });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'expression', expected: 'string', received: 42 } });

      const badEnum = await invoke('log-analysis', { content: 'x', format: 'xml' });
      expect(badEnum.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'format' } });
      expect(badEnum.json().error.details.expected).toContain('"json"');
    });

    it('secret inputs are neither echoed in errors nor stored', async () => {
      const bad = await invoke('test-misbehave', { mode: 'ok', token: 'x'.repeat(300) });
      expect(bad.json().error.details).toMatchObject({ parameter: 'token', received: '[redacted]' });
      const ok = await invoke('test-misbehave', { mode: 'ok', token: 'hunter2-secret' });
      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${ok.json().execution_id}`, key: suite.acme.key })).json();
      expect(execution.input.token).toBe('[REDACTED]');
      expect(JSON.stringify(execution)).not.toContain('hunter2');
    });

    it('rejects bad options: timeout above 300, non-boolean async, non-object body', async () => {
      expect((await invoke('json-transform', { expression: '1', data: {} }, suite.acme.key, '?timeout=301')).json().error.code).toBe('INVALID_REQUEST');
      expect((await invoke('json-transform', { inputs: { expression: '1', data: {} }, options: { timeout: 0 } })).statusCode).toBe(400);
      expect((await invoke('json-transform', { inputs: { expression: '1', data: {} }, options: { async: 'yes' } })).statusCode).toBe(400);
      expect((await invoke('json-transform', [1, 2])).json().error.message).toBe('Request body must be a JSON object');
      expect((await invoke('no-such-tool', {})).statusCode).toBe(404);
    });

    it('a tool failure is an execution in error with the tool’s retryable flag', async () => {
      const res = await invoke('test-misbehave', { mode: 'tool-error' });
      expect(res.statusCode).toBe(500);
      const body = res.json();
      expect(body).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: 'Upstream answered 503', retryable: true, details: { upstream_status: 503 } } });
      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${body.execution_id}`, key: suite.acme.key })).json();
      expect(execution).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR' } });
    });

    it('a tool input fault found while running is INVALID_INPUT (400) on the execution', async () => {
      const res = await invoke('json-transform', { expression: '$$$ nonsense (', data: {} });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', execution_id: expect.any(String), error: { code: 'INVALID_INPUT', details: { parameter: 'expression' } } });
    });

    it('a result that breaks the declared outputs is the tool’s bug: TOOL_ERROR', async () => {
      const res = await invoke('test-misbehave', { mode: 'bad-output' });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('TOOL_ERROR');
      expect(res.json().error.message).toMatch(/declared outputs/);
    });

    it('a tool past its timeout ends TOOL_TIMEOUT (504, retryable), even when it ignores its signal', async () => {
      for (const ignore_signal of [false, true]) {
        const res = await invoke('test-sleep', { ms: 5_000, ignore_signal }, suite.acme.key, '?timeout=1');
        expect(res.statusCode).toBe(504);
        expect(res.json()).toMatchObject({ status: 'error', error: { code: 'TOOL_TIMEOUT', retryable: true } });
        const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${res.json().execution_id}`, key: suite.acme.key })).json();
        expect(execution.status).toBe('error');
        expect(execution.duration_ms).toBeGreaterThanOrEqual(900);
        expect(execution.duration_ms).toBeLessThan(4_000);
      }
    });
  });

  describe('executions', () => {
    let seeded: string[];

    beforeAll(async () => {
      seeded = [];
      for (let i = 0; i < 5; i++) seeded.push((await invoke('json-transform', { expression: `${i}`, data: {} }, other.key)).json().execution_id);
      seeded.push((await invoke('test-misbehave', { mode: 'tool-error' }, other.key)).json().execution_id);
    });

    it('lists newest first with filters, scoped to the account', async () => {
      const list = (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=100', key: other.key })).json();
      expect(list.executions.map((e: { id: string }) => e.id)).toEqual([...seeded].reverse());
      expect(list).toMatchObject({ total: seeded.length, limit: 100, offset: 0 });
      expect(Object.keys(list.executions[0]).sort()).toEqual(['completed_at', 'created_at', 'duration_ms', 'id', 'progress', 'started_at', 'status', 'tool_id']);

      const errors = (await suite.t.request({ method: 'GET', url: '/v1/executions?status=error', key: other.key })).json();
      expect(errors.executions.map((e: { id: string }) => e.id)).toEqual([seeded[5]]);
      const byTool = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=2&offset=1', key: other.key })).json();
      expect(byTool.executions.map((e: { id: string }) => e.id)).toEqual([seeded[3], seeded[2]]);
      expect(byTool.total).toBe(5);

      expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${seeded[0]}`, key: suite.acme.key })).statusCode).toBe(404);
      expect((await suite.t.request({ method: 'GET', url: '/v1/executions/exec_000000000000000000000000', key: other.key })).json().error.code).toBe('NOT_FOUND');
      expect((await suite.t.request({ method: 'GET', url: '/v1/executions?status=done', key: other.key })).statusCode).toBe(400);
    });

    it('answers one shape for offset and cursor pages; an offset page continues by its cursor', async () => {
      const keys = ['executions', 'items', 'limit', 'offset', 'pagination', 'total'];
      const byOffset = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=2&offset=1', key: other.key })).json();
      expect(Object.keys(byOffset).sort()).toEqual(keys);
      expect(byOffset).toMatchObject({ total: 5, limit: 2, offset: 1, pagination: { has_more: true } });
      expect(byOffset.items).toEqual(byOffset.executions);
      const next = (await suite.t.request({ method: 'GET', url: `/v1/executions?tool_id=json-transform&limit=2&after=${byOffset.pagination.after}`, key: other.key })).json();
      expect(Object.keys(next).sort()).toEqual(keys);
      expect(next).toMatchObject({ total: 5, limit: 2, offset: null, pagination: { has_more: false, after: null } });
      expect(next.items.map((e: { id: string }) => e.id)).toEqual([seeded[1], seeded[0]]);
      const last = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=2&offset=3', key: other.key })).json();
      expect(last.pagination).toEqual({ after: null, has_more: false });
    });

    it('walks with the after cursor: no item twice, none skipped, while new ones arrive', async () => {
      const seen: string[] = [];
      let after = '';
      let pages = 0;
      for (;;) {
        const res = await suite.t.request({ method: 'GET', url: `/v1/executions?after=${after}&limit=2`, key: other.key });
        expect(res.statusCode).toBe(200);
        const { items, pagination } = res.json();
        seen.push(...items.map((e: { id: string }) => e.id));
        if (pages++ === 0) await invoke('json-transform', { expression: '"late"', data: {} }, other.key);
        if (!pagination.has_more) {
          expect(pagination.after).toBeNull();
          break;
        }
        after = pagination.after;
      }
      expect(seen).toEqual([...seeded].reverse());
      expect((await suite.t.request({ method: 'GET', url: '/v1/executions?after=bm90LWFuLWlk', key: other.key })).statusCode).toBe(400);
    });

    it('cancelling a finished execution is a 409 CONFLICT naming its status', async () => {
      // Sent the way many clients send every request: a JSON content type, and no body.
      const res = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${seeded[0]}`, key: other.key, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining("'success'") });
    });

    it('cancelling a running sync execution ends it cancelled', async () => {
      const pending = invoke('test-sleep', { ms: 10_000 }, other.key);
      let running: { id: string } | undefined;
      while (!running) {
        const list = (await suite.t.request({ method: 'GET', url: '/v1/executions?status=running&tool_id=test-sleep', key: other.key })).json();
        running = list.executions[0];
      }
      const cancel = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${running.id}`, key: other.key });
      expect(cancel.json()).toEqual({ status: 'cancelled', execution_id: running.id, message: expect.any(String) });
      const res = await pending;
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ status: 'cancelled', execution_id: running.id });
      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${running.id}`, key: other.key })).json();
      expect(execution.status).toBe('cancelled');
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${running.id}`, key: other.key })).statusCode).toBe(200);
    });
  });
});
