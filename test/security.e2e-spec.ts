/**
 * Issue 10's findings, each kept fixed: hostile bodies and paths, key-management escalation,
 * executions a narrowed key may read, and errors written outside Nest (router, HTTP parser).
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from './support/databases';
import { useTestApp } from './support/app';
import { TestToolsModule } from './support/test-tools.module';
import { IsolatedTestToolsModule } from './support/isolated-tools/isolated-tools.module';
import { MAX_JSON_DEPTH } from '../src/common/json-limits';

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** A flat invoke body whose `data` makes the whole body `levels` deep. */
const deepBody = (levels: number) => `{"expression":"$count($)","data":${nested(levels - 1)}}`;

describeEachDatabase('security', (mode) => {
  // Two threads whatever the machine (one per account by default), and a heap the memory test outgrows quickly.
  const suite = useTestApp(mode, { extensions: [TestToolsModule, IsolatedTestToolsModule], env: { TOOL_THREADS: '2', TOOL_THREAD_MAX_MEMORY_MB: '256' } });

  const invokeRaw = (toolId: string, payload: string, key = suite.acme.key, query = '') =>
    suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload, headers: { 'content-type': 'application/json' } });

  describe('JSON bodies', () => {
    it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, naming the member`, async () => {
      const ok = await invokeRaw('json-transform', deepBody(MAX_JSON_DEPTH));
      expect(ok.statusCode).toBe(200);
      for (const levels of [MAX_JSON_DEPTH + 1, 1000, 3000, 10_000]) {
        for (const query of ['', '?async=true']) {
          const res = await invokeRaw('json-transform', deepBody(levels), suite.acme.key, query);
          expect(res.statusCode).toBe(400);
          expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', retryable: false, details: { parameter: expect.stringMatching(/^data\[0\]/) } });
        }
      }
      const keyBody = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: `{"name":"x","type":"user","scopes":${nested(10_000)}}`, headers: { 'content-type': 'application/json' } });
      expect(keyBody.statusCode).toBe(400);
      expect((await suite.t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    });

    it('refuses NUL characters and unpaired surrogates in any string, keys included, with INVALID_REQUEST', async () => {
      for (const payload of ['{"content":"a\\u0000b"}', '{"content":"\\ud800"}', '{"content":"\\udc00x"}', '{"content":"\\ud800\\u0041"}', '{"a\\u0000":1,"content":"x"}']) {
        const res = await invokeRaw('log-analysis', payload);
        expect(res.statusCode).toBe(400);
        expect(res.json().error.code).toBe('INVALID_REQUEST');
      }
      const named = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: '{"name":"a\\u0000b","type":"user"}', headers: { 'content-type': 'application/json' } });
      expect(named.statusCode).toBe(400);
      expect(named.json().error.details.parameter).toBe('name');
      // A well-formed pair and an escaped backslash before "u0000" are text, not a NUL.
      const fine = await invokeRaw('log-analysis', '{"content":"\\ud83d\\ude00 \\\\u0000 ERROR x"}');
      expect(fine.statusCode).toBe(200);
    });

    it('a tool output that cannot be stored is a TOOL_ERROR, not a crash', async () => {
      const deep = await invokeRaw('json-transform', JSON.stringify({ expression: '( $wrap := function($x, $n){ $n = 0 ? $x : $wrap({"a": $x}, $n - 1) }; $wrap(1, 200) )', data: {} }));
      expect(deep.statusCode).toBe(500);
      expect(deep.json().error).toMatchObject({ code: 'TOOL_ERROR', retryable: false });
    });
  });

  describe('echoes', () => {
    it('an input that looks like one of our keys is masked in the error echo', async () => {
      const res = await invokeRaw('log-analysis', JSON.stringify({ content: 'x', format: suite.acme.key }));
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details.received).toBe(`${suite.acme.key.slice(0, 7)}…${suite.acme.key.slice(-4)}`);
      expect(res.body).not.toContain(suite.acme.key);
    });
  });

  describe('isolated tools', () => {
    it('a call that ignores its signal times out on time and stalls nobody', async () => {
      const started = Date.now();
      const stuck = invokeRaw('test-busy-isolated', '{"spin_ms":30000}', suite.acme.key, '?timeout=2');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const probeStarted = Date.now();
      expect((await suite.t.request({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      expect(Date.now() - probeStarted).toBeLessThan(1000);
      const res = await stuck;
      expect(res.json().error).toMatchObject({ code: 'TOOL_TIMEOUT', retryable: true });
      expect(Date.now() - started).toBeLessThan(4000);
      const after = await invokeRaw('test-busy-isolated', '{"spin_ms":1}');
      expect([after.statusCode, after.json().result]).toEqual([200, { spun_ms: 1 }]);
    });

    it('a catastrophic regular expression in JSONata answers at once and correctly (linear-time matching, on the event loop)', async () => {
      const started = Date.now();
      const res = await invokeRaw('json-transform', JSON.stringify({ expression: '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(a+)+$/)', data: {} }), suite.acme.key, '?timeout=2');
      expect([res.statusCode, res.json().result]).toEqual([200, { result: null }]);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('a runaway JSONata expression times out on time while another request is answered promptly', async () => {
      const started = Date.now();
      const runaway = invokeRaw('json-transform', JSON.stringify({ expression: '($loop := function($n) { $loop($n + 1) }; $loop(0))', data: {} }), suite.acme.key, '?timeout=2');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const probeStarted = Date.now();
      const other = await invokeRaw('json-transform', '{"expression":"$sum(a)","data":{"a":[1,2]}}');
      const otherMs = Date.now() - probeStarted;
      expect([other.statusCode, other.json().result]).toEqual([200, { result: 3 }]);
      expect(otherMs).toBeLessThan(1000);
      const res = await runaway;
      expect(res.json().error).toMatchObject({ code: 'TOOL_TIMEOUT', retryable: true });
      expect(Date.now() - started).toBeLessThan(4000);
    });

    it('self-applying JSONata functions are the caller\'s fault (INVALID_INPUT), never a 500', async () => {
      for (const expression of ['function($f){ 1 + $f($f) }(function($f){ 1 + $f($f) })', 'function($f){$f($f)}(function($f){$f($f)})']) {
        const res = await invokeRaw('json-transform', JSON.stringify({ expression, data: {} }));
        expect([expression, res.statusCode, res.json().error.code, res.json().error.retryable]).toEqual([expression, 400, 'INVALID_INPUT', false]);
      }
    });

    /** Starts an async busy call of 30 s for `key`; resolves with its id once `reached` holds of its execution. */
    async function startSpinning(key: string, reached = (execution: { progress: number }) => execution.progress === 50): Promise<string> {
      const accepted = await invokeRaw('test-busy-isolated', '{"spin_ms":30000}', key, '?async=true');
      const id = accepted.json().execution_id;
      let execution = { progress: 0 };
      for (let i = 0; i < 100 && !reached(execution); i++) {
        execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
        if (!reached(execution)) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(reached(execution)).toBe(true);
      return id;
    }

    it('progress reaches the execution, and a cancel stops a tool that ignores it', async () => {
      const id = await startSpinning(suite.acme.key);
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: suite.acme.key })).statusCode).toBe(200);
      // The thread is gone: the pool runs the next call at once (acme's share, one thread, would otherwise be busy for 30 s).
      const next = await invokeRaw('test-busy-isolated', '{"spin_ms":1}');
      expect(next.statusCode).toBe(200);
    });

    it("one account asking for every thread gets its share: another account's call runs at once, not after the hog's 30 s", async () => {
      const other = await suite.t.createAccount('other');
      const hogs = [await startSpinning(suite.acme.key), await startSpinning(suite.acme.key, (execution) => (execution as { status?: string }).status === 'running')];
      const theirs = await invokeRaw('test-busy-isolated', '{"spin_ms":1}', other.key, '?timeout=60');
      expect([theirs.statusCode, theirs.json().result]).toEqual([200, { spun_ms: 1 }]);
      const waiting = (await suite.t.request({ method: 'GET', url: `/v1/executions/${hogs[1]}`, key: suite.acme.key })).json();
      expect(waiting.progress).toBe(0);
      for (const id of hogs) expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: suite.acme.key })).statusCode).toBe(200);
    });

    it('a call that outgrows its thread heap is INVALID_INPUT naming the limit, and the pool serves the next call', async () => {
      const res = await invokeRaw('test-memory-hog-isolated', '{"megabytes":4096}');
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', retryable: false, details: { memory_limit_mb: 256 } });
      expect(res.json().error.message).toContain('TOOL_THREAD_MAX_MEMORY_MB');
      const next = await invokeRaw('test-memory-hog-isolated', '{"megabytes":1}');
      expect([next.statusCode, next.json().result]).toEqual([200, { held_mb: 1 }]);
    });

    it('JSONata memory bombs are INVALID_INPUT, and the service lives on', async () => {
      // Before the heap check between steps, one doubling overshot the thread's 256 MB at once and V8 ended the whole process.
      // A doubled array is now stopped by the sequence bound long before; strings under every other bound fill the heap budget.
      const bombs: Array<[string, RegExp]> = [
        ['$reduce([1..40], function($all, $n) { $append($all, $all) }, [1])', /^JSONata evaluation stopped: it made a sequence of more than \d+ items$/],
        ['($s := $pad("", 2000000, "x"); $reduce([1..400], function($all, $n) { $append($all, $uppercase($s & $n)) }, []))', /^JSONata evaluation stopped: it took more than \d+ MB of memory$/],
      ];
      for (const [bomb, message] of bombs) {
        const res = await invokeRaw('json-transform', JSON.stringify({ expression: bomb, data: {} }), suite.acme.key, '?timeout=60');
        expect([res.statusCode, res.json().error.code, res.json().error.message]).toEqual([400, 'INVALID_INPUT', expect.stringMatching(message)]);
        const after = await invokeRaw('json-transform', '{"expression":"$sum(a)","data":{"a":[1,2]}}');
        expect(after.json().result).toEqual({ result: 3 });
      }
    });
  });

  describe('paths', () => {
    it('a NUL in a path id is INVALID_REQUEST naming it, on every route that takes one', async () => {
      const routes: [string, string][] = [
        ['GET', '/v1/executions/a%00b'],
        ['DELETE', '/v1/executions/%00'],
        ['GET', '/v1/executions/%00/events'],
        ['GET', '/api/skill/status/%00'],
        ['DELETE', '/v1/keys/%00'],
        ['POST', '/v1/keys/%00/rotate'],
        ['POST', '/v1/keys/%00/regenerate'],
      ];
      for (const [method, url] of routes) {
        const res = await suite.t.request({ method: method as 'GET', url, key: suite.acme.key, ...(method === 'POST' && { payload: {} }) });
        expect([url, res.statusCode, res.json().error.code]).toEqual([url, 400, 'INVALID_REQUEST']);
      }
    });

    it('an undecodable or oversized path gets the envelope', async () => {
      for (const url of ['/v1/keys/%zz', '/v1/tools/%ff', `/v1/tools/${'a'.repeat(5000)}`]) {
        const res = await suite.t.request({ method: 'GET', url, key: suite.acme.key });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(res.json().error.code).toBe('INVALID_REQUEST');
        expect(res.body).not.toContain('aaaaaaaaaa');
      }
    });

    it('an over-long workspace path is INVALID_INPUT', async () => {
      for (const tool of ['log-analysis', 'secret-scan']) {
        const res = await invokeRaw(tool, JSON.stringify({ path: 'a'.repeat(1024) }));
        expect([tool, res.statusCode, res.json().error.code]).toEqual([tool, 400, 'INVALID_INPUT']);
      }
    });
  });

  describe('key management with a narrowed key', () => {
    it('rotate and regenerate never hand out a wider secret', async () => {
      const { id: accountId } = await suite.t.createAccount('narrow-keys');
      const keys = suite.t.app.get((await import('../src/keys/api-keys.service')).ApiKeysService);
      const full = await keys.create(accountId, { name: 'full', type: 'service' });
      const fullUser = await keys.create(accountId, { name: 'full-user', type: 'user' });
      const manager = (await keys.create(accountId, { name: 'mgr', type: 'service', scopes: ['keys:manage'], tool_ids: ['secret-scan'] })).secret;
      for (const [path, id] of [['rotate', full.record.id], ['regenerate', fullUser.record.id]]) {
        const res = await suite.t.request({ method: 'POST', url: `/v1/keys/${id}/${path}`, key: manager, payload: {} });
        expect([path, res.statusCode, res.json().error?.code]).toEqual([path, 403, 'FORBIDDEN']);
      }
      // Its own peers (no wider than itself) it may rotate.
      const peer = await keys.create(accountId, { name: 'peer', type: 'service', scopes: ['keys:manage'], tool_ids: ['secret-scan'] });
      const rotated = await suite.t.request({ method: 'POST', url: `/v1/keys/${peer.record.id}/rotate`, key: manager, payload: {} });
      expect(rotated.statusCode).toBe(201);
      expect(rotated.json()).toMatchObject({ scopes: ['keys:manage'], tool_ids: ['secret-scan'] });
    });

    it('a key has at most one pending successor; answers tell what is stored', async () => {
      const first = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'rot', type: 'service' } });
      const id = first.json().id;
      const once = await suite.t.request({ method: 'POST', url: `/v1/keys/${id}/rotate`, key: suite.acme.key, payload: { revoke_old_after: 3600 } });
      expect(once.statusCode).toBe(201);
      const twice = await suite.t.request({ method: 'POST', url: `/v1/keys/${id}/rotate`, key: suite.acme.key, payload: { revoke_old_after: 60 } });
      expect(twice.statusCode).toBe(409);
      expect(twice.json().error.message).toContain(once.json().id);
      const stored = await suite.t.request({ method: 'GET', url: `/v1/keys/${id}`, key: suite.acme.key });
      expect(stored.json().revoked_at).toBe(once.json().old_key.revoked_at);
      // Concurrent rotations of a fresh key: exactly one wins.
      const fresh = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'race', type: 'service' } })).json().id;
      const race = await Promise.all([1, 2, 3].map(() => suite.t.request({ method: 'POST', url: `/v1/keys/${fresh}/rotate`, key: suite.acme.key, payload: {} })));
      expect(race.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    });
  });

  describe('executions a narrowed key may read', () => {
    it('sees, follows and cancels only executions of its own tools', async () => {
      const other = await invokeRaw('json-transform', '{"expression":"1","data":{}}');
      const otherId = other.json().execution_id;
      const narrow = await suite.t.createKey(suite.acme.id, { name: 'narrow', type: 'service', tool_ids: ['log-analysis'] });
      const own = await invokeRaw('log-analysis', '{"content":"ERROR x"}', narrow);
      const ownId = own.json().execution_id;

      for (const url of [`/v1/executions/${otherId}`, `/api/skill/status/${otherId}`, `/v1/executions/${otherId}/events`]) {
        expect([url, (await suite.t.request({ method: 'GET', url, key: narrow })).statusCode]).toEqual([url, 404]);
      }
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${otherId}`, key: narrow })).statusCode).toBe(404);
      expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${ownId}`, key: narrow })).statusCode).toBe(200);

      const listed = (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=100', key: narrow })).json();
      expect(listed.executions.map((e: { tool_id: string }) => e.tool_id)).toEqual(expect.arrayContaining(['log-analysis']));
      expect(listed.executions.every((e: { tool_id: string }) => e.tool_id === 'log-analysis')).toBe(true);
      const filtered = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform', key: narrow })).json();
      expect(filtered.total).toBe(0);
      const cursor = (await suite.t.request({ method: 'GET', url: '/v1/executions?after=&limit=100', key: narrow })).json();
      expect(cursor.items.every((e: { tool_id: string }) => e.tool_id === 'log-analysis')).toBe(true);
    });
  });

  describe('the HTTP parser', () => {
    let port: number;
    beforeAll(async () => {
      await suite.t.app.listen(0, '127.0.0.1');
      port = (suite.t.app.getHttpServer().address() as AddressInfo).port;
    });

    const raw = (request: Buffer | string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
        socket.end(request);
      });

    it.each([
      ['a NUL in a header', 'GET /v1/tools HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 400],
      ['a bad request line', 'GARBAGE\r\n\r\n', 400],
      ['a raw é in the path', Buffer.from('GET /v1/tools/é HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8'), 400],
      ['broken chunked encoding', 'POST /v1/keys HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
      ['a 60 KB query', `GET /v1/tools?search=${'a'.repeat(60_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    ])('%s gets the envelope', async (_name, request, status) => {
      const answer = await raw(request);
      expect(answer.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body.error).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
      expect(answer.toLowerCase()).toContain('x-content-type-options: nosniff');
    });
  });
});
