/**
 * The egress policy through the public API (REST and MCP), for both network tools of the platform:
 * literal addresses of every refused class and their odd spellings, a name that resolves to
 * loopback through the test's own resolver (the example world's dnsmasq), and a redirect from an
 * allowed name to a refused address. Refusals happen at the address check, before any packet:
 * nothing here is sent anywhere but 127.0.0.0/8.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useTestApp, type SuiteApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { exampleWorldEnv } from './support/examples';


/** The two platform tools and how each names its target. */
const TOOLS = [
  { id: 'health-check', input: (target: string) => ({ target }), parameter: 'target' },
  { id: 'webhook-trigger', input: (url: string) => ({ url, payload: { event: 'probe' } }), parameter: 'url' },
];

const REFUSED_LITERALS = [
  ['loopback', 'http://127.0.0.1:8080/'],
  ['loopback, decimal spelling', 'http://2130706433:8080/'],
  ['loopback, hex spelling', 'http://0x7f.1:8080/'],
  ['loopback, short spelling', 'http://127.1:8080/'],
  ['IPv6 loopback', 'http://[::1]:8080/'],
  ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]:8080/'],
  ['this network', 'http://0.0.0.0:8080/'],
  ['RFC 1918', 'http://10.0.0.1/'],
  ['RFC 1918', 'http://192.168.1.1/'],
  ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
  ['carrier-grade NAT', 'http://100.64.0.1/'],
  ['multicast', 'http://224.0.0.1/'],
  ['reserved', 'http://240.0.0.1/'],
  ['IPv6 unique local', 'http://[fd00::1]/'],
  ['IPv6 link-local', 'http://[fe80::1]/'],
  ['IPv4-mapped RFC 1918', 'http://[::ffff:10.0.0.1]/'],
  ['IPv4-compatible loopback', 'http://[::127.0.0.1]/'],
] as const;

function egressSuite(name: string, env: () => Record<string, string>, body: (suite: SuiteApp) => void): void {
  describe(name, () => {
    const suite = useTestApp(DATABASE_MODES[0], { env: env() });
    body(suite);
  });
}

const invoke = (suite: SuiteApp, tool: string, input: object) =>
  suite.t.request({ method: 'POST', url: `/v1/tools/${tool}/invoke`, key: suite.acme.key, payload: input });

// The default policy, with names resolved by the world's dnsmasq (every *.example.test is loopback).
egressSuite('Egress policy by default, through the API', () => ({ EGRESS_DNS_SERVERS: exampleWorldEnv().EGRESS_DNS_SERVERS }), (suite) => {
  describe.each(TOOLS)('$id', ({ id, input, parameter }) => {
    it.each(REFUSED_LITERALS)('refuses %s (%s) as INVALID_INPUT naming the parameter', async (_class, target) => {
      const res = await invoke(suite, id, input(target));
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'INVALID_INPUT',
        details: { parameter, expected: 'a public address' },
        suggestion: expect.stringContaining('EGRESS_ALLOW'),
      });
    });

    it('refuses a name that resolves to loopback (the check is on the resolved address)', async () => {
      const res = await invoke(suite, id, input('http://status.example.test:8080/healthz'));
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter, received: 'status.example.test' } });
    });
  });

  it('refuses the TCP form of health-check too', async () => {
    const res = await invoke(suite, 'health-check', { target: 'tcp://status.example.test:8080' });
    expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'target' } });
  });

  it('answers an MCP client with an error result naming the parameter', async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `${await suite.t.app.getUrl()}/v1/mcp`.replace('[::1]', '127.0.0.1');
    const client = new Client({ name: 'egress', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${suite.acme.key}` } } }));
    try {
      const result = await client.callTool({ name: 'webhook-trigger', arguments: { url: 'http://169.254.169.254/', payload: {} } });
      expect(result.isError).toBe(true);
      expect(JSON.parse((result.content as { text: string }[])[0].text).error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url' } });
    } finally {
      await client.close();
    }
  });
});

// The operator opens the example names only: a redirect from one of them to a loopback literal is refused.
egressSuite(
  'Egress policy with EGRESS_ALLOW=*.example.test, through the API',
  () => {
    const { EGRESS_DNS_SERVERS, EGRESS_CA_FILE } = exampleWorldEnv();
    return { EGRESS_DNS_SERVERS, EGRESS_CA_FILE, EGRESS_ALLOW: '*.example.test' };
  },
  (suite) => {
    it('lets the allowed name through', async () => {
      const res = await invoke(suite, 'health-check', { target: 'https://status.example.test:8443/healthz' });
      expect(res.json()).toMatchObject({ status: 'success', result: { healthy: true, status: 200 } });
    });

    it.each(TOOLS)('$id: refuses a redirect from the allowed name to a refused address', async ({ id, input, parameter }) => {
      const to = encodeURIComponent('http://127.0.0.1:8080/healthz');
      const res = await invoke(suite, id, input(`http://status.example.test:8080/redirect?to=${to}`));
      if (id === 'webhook-trigger') {
        // webhook-trigger does not follow redirects (a POST must not be replayed elsewhere): it reports the 302.
        expect(res.json()).toMatchObject({ status: 'success', result: { status: 302, delivered: false } });
        return;
      }
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter, received: '127.0.0.1' } });
    });
  },
);
