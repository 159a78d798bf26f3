/**
 * Property-based fuzzing of every endpoint, REST and MCP, in both engine modes: thousands of
 * generated requests — hostile paths, headers and bodies, nesting up to and past the limit, NUL
 * and lone surrogates — none of which may answer 5xx, leave the error envelope, or show a stack
 * trace, a file path or a key secret; and the service stays responsive while it runs.
 * Expressions that run until their timeout (catastrophic regexes) are in security.e2e-spec.ts.
 * The seed is printed; replay a failure with FUZZ_SEED=<seed> (and FUZZ_RUNS to change the count).
 */
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { MAX_JSON_DEPTH } from '../src/common/json-limits';
import { describeEachEngine } from './support/engines';
import { useTestApp } from './support/app';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);
/** Requests per engine mode (two modes: twice this in a run). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5_000);
/** Keys the requests rotate over: each has its own per-tool window, so validation stays reachable. */
const KEY_COUNT = 40;
const ERROR_CODES = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_REQUEST', 'INVALID_INPUT', 'CONFLICT', 'RATE_LIMITED', 'TOOL_TIMEOUT', 'TOOL_ERROR', 'INTERNAL_ERROR']);
/**
 * What would show the service's insides: a stack frame, a path of this checkout or of the machine's
 * temp and work folders, a TypeScript source position, or a file of the service's own dependencies.
 * (A `node_modules` path alone is data: image-scan lists the npm packages inside images.)
 */
const LEAKS = new RegExp(String.raw`\n\s+at |\/work\/|\/tmp\/|\.ts:\d+|node_modules\/(@nestjs|fastify|typeorm|@modelcontextprotocol|@electric-sql|ioredis|bull|pg)\/|${process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
const TOOLS = ['json-transform', 'log-analysis', 'secret-scan', 'no-such-tool'];

console.log(`fuzz: seed ${SEED}, ${RUNS} requests per mode (replay with FUZZ_SEED=${SEED})`);

/** Every UTF-8 byte percent-encoded (encodeURIComponent throws on lone surrogates). */
const percentEncode = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** Strings that have broken something before, beside arbitrary ones. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udc00x', '😀', '..', '../../etc/passwd', '/etc/passwd', '%', '%00', 'é', 'a'.repeat(1100), '$', '\\', '"', '{}', 'exec_0VbiqEnzcR03HoCuaSyv0jAf', 'key_x'),
);
const segment = fc.oneof(
  nastyText.map((text) => percentEncode(text)),
  fc.constantFrom('%00', '%zz', '%ff', '%ED%A0%80', 'a'.repeat(5000), '', '.', '..', '%2e%2e'),
);
const nested = (depth: number, arrays: boolean) => (arrays ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
/** JSON texts: generated values, deep ones around the limit, and broken ones. */
const jsonText = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: MAX_JSON_DEPTH - 3, max: 12_000 }), fc.boolean()).map(([depth, arrays]) => nested(depth, arrays)) },
  { weight: 1, arbitrary: fc.constantFrom('{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"a":"\\udfff\\ud800"}', '{', '[1,', '{"a":1}}', 'null', '""', '', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}') },
);
const toolInputs = fc.oneof(
  fc.record({ expression: fc.oneof(nastyText, fc.constantFrom('$sum(a)', '**', '$string($)', '$keys($)', 'a.b[0]')), data: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
  fc.record({ content: nastyText, path: nastyText, format: nastyText, files: fc.array(nastyText, { maxLength: 3 }) }, { requiredKeys: [] }),
  fc.dictionary(nastyText, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
);
const invokeBody = fc.oneof(
  toolInputs.map((inputs) => JSON.stringify(inputs)),
  fc.tuple(fc.constantFrom(...TOOLS), toolInputs, fc.jsonValue({ maxDepth: 2 })).map(([tool_id, inputs, options]) => JSON.stringify({ tool_id, inputs, options })),
  jsonText,
);
const query = fc.dictionary(fc.constantFrom('limit', 'offset', 'async', 'timeout', 'status', 'category', 'search', 'tool_id', 'after'), nastyText, { maxKeys: 3 }).map((params) =>
  Object.keys(params).length === 0 ? '' : `?${Object.entries(params).map(([k, v]) => `${k}=${percentEncode(v)}`).join('&')}`,
);
const mcpMessage = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), nastyText), method: fc.constantFrom('tools/list', 'tools/call', 'initialize', 'ping', 'nope', 'resources/list'), params: fc.oneof(fc.record({ name: fc.constantFrom(...TOOLS), arguments: toolInputs }), fc.jsonValue({ maxDepth: 3 })) }, { requiredKeys: ['jsonrpc', 'method'] }).map((m) => JSON.stringify(m)),
  jsonText,
);

type Request = InjectOptions & { keyIndex: number | null };
const request: fc.Arbitrary<Request> = fc
  .tuple(
    fc.oneof(
      fc.tuple(fc.constant('GET'), query).map(([method, q]) => ({ method, url: `/v1/tools${q}` })),
      fc.tuple(fc.constant('GET'), fc.oneof(fc.constantFrom(...TOOLS), segment)).map(([method, id]) => ({ method, url: `/v1/tools/${id}` })),
      fc.tuple(fc.constantFrom(...TOOLS, 'json-transform', 'json-transform'), query, invokeBody).map(([id, q, payload]) => ({ method: 'POST', url: `/v1/tools/${id}/invoke${q}`, payload })),
      fc.tuple(fc.constantFrom(...TOOLS), invokeBody).map(([id, payload]) => ({ method: 'POST', url: `/api/skill/tools/${id}/invoke`, payload })),
      fc.tuple(fc.constantFrom('GET', 'DELETE'), segment).map(([method, id]) => ({ method, url: `/v1/executions/${id}` })),
      segment.map((id) => ({ method: 'GET', url: `/v1/executions/${id}/events` })),
      segment.map((id) => ({ method: 'GET', url: `/api/skill/status/${id}` })),
      query.map((q) => ({ method: 'GET', url: `/v1/executions${q}` })),
      fc.tuple(fc.constantFrom('GET', 'POST'), jsonText).map(([method, payload]) => ({ method, url: '/v1/keys', ...(method === 'POST' && { payload }) })),
      fc.tuple(fc.constantFrom('DELETE', 'GET'), segment).map(([method, id]) => ({ method, url: `/v1/keys/${id}` })),
      fc.tuple(fc.constantFrom('rotate', 'regenerate'), segment, jsonText).map(([action, id, payload]) => ({ method: 'POST', url: `/v1/keys/${id}/${action}`, payload })),
      fc.tuple(fc.constantFrom(...TOOLS), segment).map(([id]) => ({ method: 'DELETE', url: `/v1/tools/${id}/cache` })),
      fc.oneof(mcpMessage, fc.array(mcpMessage, { minLength: 0, maxLength: 12 }).map((batch) => `[${batch.join(',')}]`)).map((payload) => ({ method: 'POST', url: '/v1/mcp', payload, mcp: true })),
      segment.map((s) => ({ method: 'GET', url: `/${s}` })),
    ),
    fc.option(fc.integer({ min: 0, max: KEY_COUNT - 1 }), { freq: 8 }),
    fc.record(
      {
        'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', ''),
        'x-idempotency-key': nastyText.map((t) => percentEncode(t).slice(0, 300)),
        'cache-control': fc.constantFrom('no-cache', 'max-age=0', ''),
        'api-version': fc.constantFrom('1.0', '0.9', '2.0', ''),
        'x-request-id': nastyText.map((t) => percentEncode(t).slice(0, 200)),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([route, keyIndex, headers]) => {
    const { mcp, ...rest } = route as InjectOptions & { mcp?: boolean };
    const merged: Record<string, string> = { ...(rest.payload !== undefined && { 'content-type': 'application/json' }), ...headers };
    if (mcp) Object.assign(merged, { accept: 'application/json, text/event-stream', 'content-type': 'application/json' });
    for (const [name, value] of Object.entries(merged)) if (value === '') delete merged[name];
    return { ...rest, headers: merged, keyIndex } as Request;
  });

describeEachEngine('fuzz', (mode) => {
  // Large custom limits: the fuzz is about answers, not about the rate limiter (tested elsewhere).
  const suite = useTestApp(mode, { env: { IP_RATE_LIMIT: '1000000' } });
  const keys: string[] = [];

  beforeAll(async () => {
    const { AccountsService } = await import('../src/keys/accounts.service');
    const account = await suite.t.app.get(AccountsService).create({ name: 'fuzz', tier: 'enterprise', requests_per_minute: 10_000_000, monthly_calls: null });
    for (let i = 0; i < KEY_COUNT; i++) keys.push(await suite.t.createKey(account.id, { name: `fuzz-${i}`, type: i % 2 ? 'user' : 'service' }));
  });

  it(`answers ${RUNS} generated requests without a 5xx, outside the envelope, or a leak`, async () => {
    const probeLatencies: number[] = [];
    let fuzzing = true;
    const probe = (async () => {
      while (fuzzing) {
        const started = performance.now();
        const res = await suite.t.request({ method: 'GET', url: '/healthz' });
        probeLatencies.push(performance.now() - started);
        expect(res.statusCode).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    try {
      await fc.assert(
        fc.asyncProperty(request, async ({ keyIndex, ...options }) => {
          const res = await suite.t.request({ ...options, key: keyIndex === null ? undefined : keys[keyIndex] });
          const context = `${options.method} ${String(options.url).slice(0, 120)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          if (res.statusCode >= 500 && !res.body.includes('"TOOL_TIMEOUT"')) throw new Error(`5xx: ${context}`);
          if (LEAKS.test(res.body) || keys.some((key) => res.body.includes(key))) throw new Error(`leak: ${context}`);
          if (res.statusCode >= 400 && !String(options.url).startsWith('/v1/mcp')) {
            const code = (res.json() as { error?: { code?: string; message?: unknown } }).error;
            if (!code || !ERROR_CODES.has(String(code.code)) || typeof code.message !== 'string') throw new Error(`not enveloped: ${context}`);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    } finally {
      fuzzing = false;
      await probe;
    }

    const sorted = probeLatencies.sort((a, b) => a - b);
    const p99 = sorted[Math.floor(sorted.length * 0.99)];
    console.log(`fuzz [${mode.name}]: health probe p99 ${p99.toFixed(1)} ms over ${sorted.length} probes`);
    expect(p99).toBeLessThan(1000);
    const after = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: keys[0], payload: { expression: '$sum(a)', data: { a: [1, 2] } } });
    expect(after.json().result).toEqual({ result: 3 });
  }, 600_000);
});
