/**
 * EXTENSION_MODULES: a package (test/extension-fixture) loaded at boot beside the built-in tools,
 * whose tool injects the integration client its own module provides; bad specifiers stop start-up
 * naming them. Also where an upstream's Retry-After reaches a sync answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QuoteClients } from './extension-fixture';
import { startTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { freePort } from './support/free-port';
import { startServiceProcess } from './support/processes';

const FIXTURE = './test/extension-fixture';

describe('EXTENSION_MODULES', () => {
  let upstream: Server;
  let answer: { status: number; headers?: Record<string, string>; body: unknown } = { status: 200, body: {} };
  let quoteUrl = '';
  beforeAll(async () => {
    upstream = createServer((_req, res) => res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body)));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    quoteUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => upstream.close(resolve)));

  describe('a package whose tool injects its own client', () => {
    it('lists the tool beside the built-ins, runs it through the injected client, and passes an upstream Retry-After on', async () => {
      const t = await startTestApp({ env: { ...(await embedded()), EXTENSION_MODULES: FIXTURE, QUOTE_API_URL: quoteUrl, EGRESS_ALLOW: '127.0.0.0/8' } });
      try {
        const acme = await t.createAccount('acme');
        const ids = (await t.request({ method: 'GET', url: '/v1/tools?limit=100', key: acme.key })).json().tools.map((tool: { id: string }) => tool.id);
        expect(ids).toEqual(expect.arrayContaining(['quote-of-the-day', 'health-check', 'json-transform']));
        const invoke = (payload: object) => t.request({ method: 'POST', url: '/v1/tools/quote-of-the-day/invoke', key: acme.key, headers: { 'cache-control': 'no-cache' }, payload });
        answer = { status: 200, body: { text: 'Simplicity is prerequisite for reliability.', author: 'Edsger W. Dijkstra' } };
        expect((await invoke({ shout: true })).json()).toMatchObject({ status: 'success', result: { text: 'SIMPLICITY IS PREREQUISITE FOR RELIABILITY.', author: 'Edsger W. Dijkstra' } });
        await invoke({});
        expect(t.app.get(QuoteClients).size).toBe(1);

        answer = { status: 503, headers: { 'retry-after': '7' }, body: { error: 'maintenance' } };
        const unavailable = await invoke({});
        expect(unavailable.statusCode).toBe(500);
        expect(unavailable.headers['retry-after']).toBe('7');
        expect(unavailable.json().error).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retry_after: 7, details: { upstream: { service: 'quotes', status: 503 } } });

        answer = { status: 404, body: {} };
        const missing = await invoke({});
        expect(missing.json().error).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'quotes', status: 404 } } });
        expect(missing.headers['retry-after']).toBeUndefined();
      } finally {
        await t.close();
      }
    });
  });

  it("the tool listing's ETag changes with the catalogue (docs/API.md#listing-tools)", async () => {
    const listing = async (env: Record<string, string>) => {
      const t = await startTestApp({ env: { ...(await embedded()), ...env } });
      try {
        const acme = await t.createAccount('acme');
        const first = await t.request({ method: 'GET', url: '/v1/tools', key: acme.key, headers: { 'accept-encoding': 'gzip' } });
        const again = await t.request({ method: 'GET', url: '/v1/tools', key: acme.key, headers: { 'accept-encoding': 'gzip', 'if-none-match': first.headers.etag as string } });
        return { etag: first.headers.etag, revalidated: again.statusCode };
      } finally {
        await t.close();
      }
    };
    const builtIn = await listing({});
    const extended = await listing({ EXTENSION_MODULES: FIXTURE, QUOTE_API_URL: quoteUrl });
    expect(builtIn.revalidated).toBe(304);
    expect(extended.revalidated).toBe(304);
    expect(extended.etag).not.toBe(builtIn.etag);
  }, 180_000); // two boots

  describe('bad specifiers stop start-up naming them', () => {
    it.each([
      ['./test/no-such-extension', /EXTENSION_MODULES: '\.\/test\/no-such-extension' cannot be found/],
      ['tos-no-such-package', /EXTENSION_MODULES: 'tos-no-such-package' cannot be found \(no package of that name/],
      ['./test/support/free-port.ts', /EXTENSION_MODULES: '\.\/test\/support\/free-port\.ts' exports no Nest module/],
    ])('%s', async (specifier, message) => {
      await expect(startTestApp({ env: { ...(await embedded()), EXTENSION_MODULES: specifier } })).rejects.toThrow(message);
    });

    it('in a real service process: one line naming the variable, exit code 1', async () => {
      const env = { ...(await embedded()), EXTENSION_MODULES: './test/no-such-extension', PORT: String(await freePort()) };
      const failed = await startServiceProcess('all', env).catch((err: Error) => err);
      expect(failed).toBeInstanceOf(Error);
      expect((failed as Error).message).toMatch(/exited with 1 before it was ready[\s\S]*EXTENSION_MODULES: '\.\/test\/no-such-extension' cannot be found/);
    });
  });
});

const cleanups: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));

/** A fresh embedded database directory for one app, removed after the file. */
async function embedded(): Promise<Record<string, string>> {
  const { env, cleanup } = await DATABASE_MODES[0].prepare();
  cleanups.push(cleanup);
  return env;
}
