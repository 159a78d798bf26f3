/**
 * Signed requests (docs/API.md#signed-requests): a key created with require_signature answers only
 * requests that carry X-Timestamp and X-Signature over exactly what was sent, inside the window, once.
 * On both engines: the replay cache is in process (embedded) or in Redis (distributed).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { LightMyRequestResponse } from 'fastify';
import { SIGNING_SECRET_PATTERN, signatureHeaders, signatureOf } from '../src/identity/request-signature';
import { startTestApp, useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const SECRETS_KEY = randomBytes(32).toString('base64');

interface SigningKey {
  id: string;
  key: string;
  signingSecret: string;
}

describeEachEngine('signed requests', (mode) => {
  const suite = useTestApp(mode, { env: { SECRETS_KEY } });
  let signer: SigningKey;
  let url: string;

  const createSigningKey = async (name: string): Promise<SigningKey> => {
    const created = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name, type: 'service', require_signature: true } });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    return { id: body.id, key: body.key, signingSecret: body.signing_secret };
  };

  /** A request with the signing key; `signed` overrides what the signature is computed over. */
  const send = (
    method: string,
    url: string,
    options: { body?: string; signed?: { url?: string; body?: string; now?: number; secret?: string }; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> => {
    const { body, signed = {} } = options;
    const headers = signatureHeaders(signed.secret ?? signer.signingSecret, { method, pathWithQuery: signed.url ?? url, body: signed.body ?? body ?? '' }, signed.now);
    return suite.t.request({
      method: method as 'GET',
      url,
      key: signer.key,
      payload: body,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers, ...options.headers },
    });
  };

  const refused = (response: LightMyRequestResponse, message: RegExp) => {
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(message) });
    expect(response.body).not.toContain(signer.signingSecret);
  };

  beforeAll(async () => {
    signer = await createSigningKey('signer');
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = (await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  it('creates a signing key: its signing secret is shown once, the record says it requires signatures', async () => {
    expect(signer.signingSecret).toMatch(SIGNING_SECRET_PATTERN);
    const record = (await suite.t.request({ method: 'GET', url: `/v1/keys/${signer.id}`, key: suite.acme.key })).json();
    expect(record.require_signature).toBe(true);
    expect(JSON.stringify(record)).not.toContain(signer.signingSecret);
    const plain = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 'plain', type: 'service' } });
    expect(plain.json()).toMatchObject({ require_signature: false });
    expect(plain.json().signing_secret).toBeUndefined();
  });

  it('accepts a signed GET and a signed POST with its body', async () => {
    expect((await send('GET', '/v1/usage')).statusCode).toBe(200);
    expect((await send('GET', '/v1/keys?limit=1&offset=0')).statusCode).toBe(200);
    const created = await send('POST', '/v1/keys', { body: JSON.stringify({ name: 'made-by-signer', type: 'user' }) });
    expect(created.statusCode).toBe(201);
    expect(created.json().name).toBe('made-by-signer');
  });

  it('refuses a request without the headers', async () => {
    refused(await suite.t.request({ method: 'GET', url: '/v1/usage', key: signer.key }), /requires signed requests: send X-Timestamp.*X-Signature/);
    const onlyTimestamp = await suite.t.request({ method: 'GET', url: '/v1/usage', key: signer.key, headers: { 'x-timestamp': String(Math.floor(Date.now() / 1000)) } });
    refused(onlyTimestamp, /requires signed requests/);
  });

  it('refuses a bad signature, signed with another secret or over another body, path or query', async () => {
    refused(await send('GET', '/v1/usage', { signed: { secret: `sk_sig_${'A'.repeat(32)}` } }), /Invalid request signature/);
    refused(await send('GET', '/v1/usage', { headers: { 'x-signature': 'sha256=' + '0'.repeat(64) } }), /Invalid request signature/);
    const tampered = await send('POST', '/v1/keys', { body: JSON.stringify({ name: 'tampered', type: 'user' }), signed: { body: JSON.stringify({ name: 'original', type: 'user' }) } });
    refused(tampered, /Invalid request signature/);
    refused(await send('GET', '/v1/keys?limit=2', { signed: { url: '/v1/keys?limit=1' } }), /Invalid request signature/);
    refused(await send('GET', '/v1/usage', { signed: { url: '/v1/keys' } }), /Invalid request signature/);
    // The same body bytes re-serialised differently are other bytes.
    const respaced = await send('POST', '/v1/keys', { body: '{"name": "spaced", "type": "user"}', signed: { body: '{"name":"spaced","type":"user"}' } });
    refused(respaced, /Invalid request signature/);
  });

  it('refuses a timestamp more than 5 minutes old or ahead', async () => {
    refused(await send('GET', '/v1/usage', { signed: { now: Date.now() - 301_000 } }), /outside the 5-minute window.*in the past/);
    refused(await send('GET', '/v1/usage', { signed: { now: Date.now() + 301_000 } }), /outside the 5-minute window.*in the future/);
    expect((await send('GET', '/v1/usage', { signed: { now: Date.now() - 240_000 } })).statusCode).toBe(200);
    refused(await send('GET', '/v1/usage', { headers: { 'x-timestamp': 'yesterday' } }), /Malformed X-Timestamp/);
  });

  // Each replay test signs a request no other test sends: the same request signed in the same second is the same signature.
  it('refuses a replay: the same signature twice', async () => {
    const url = `/v1/keys/${signer.id}`;
    const headers = signatureHeaders(signer.signingSecret, { method: 'GET', pathWithQuery: url, body: '' });
    const once = await suite.t.request({ method: 'GET', url, key: signer.key, headers });
    expect(once.statusCode).toBe(200);
    refused(await suite.t.request({ method: 'GET', url, key: signer.key, headers }), /Replayed request/);
  });

  if (mode.name === 'distributed') {
    it('refuses a replay sent to another API process (the replay cache is in Redis)', async () => {
      const other = await startTestApp({ env: suite.env });
      try {
        const url = '/v1/keys?limit=3';
        const headers = signatureHeaders(signer.signingSecret, { method: 'GET', pathWithQuery: url, body: '' });
        expect((await suite.t.request({ method: 'GET', url, key: signer.key, headers })).statusCode).toBe(200);
        refused(await other.request({ method: 'GET', url, key: signer.key, headers }), /Replayed request/);
      } finally {
        await other.close();
      }
    });
  }

  it('leaves keys without the flag unaffected', async () => {
    expect((await suite.t.request({ method: 'GET', url: '/v1/usage', key: suite.acme.key })).statusCode).toBe(200);
  });

  it('holds MCP requests to the same rule', async () => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } } });
    // Over the socket, as MCP clients send it.
    const post = (headers: Record<string, string>) =>
      fetch(`${url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${signer.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: initialize,
      });
    const unsigned = await post({});
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { message: string } }).error.message).toMatch(/requires signed requests/);
    const signed = await post(signatureHeaders(signer.signingSecret, { method: 'POST', pathWithQuery: '/v1/mcp', body: initialize }));
    expect(signed.status).toBe(200);
    expect(await signed.text()).toContain('tool-orchestration-service');
  });

  it('rotating a signing key gives its successor a new signing secret; the old secret does not sign for it', async () => {
    const own = await createSigningKey('to-rotate');
    const rotated = await suite.t.request({ method: 'POST', url: `/v1/keys/${own.id}/rotate`, key: suite.acme.key, payload: {} });
    expect(rotated.statusCode).toBe(201);
    const successor = rotated.json();
    expect(successor).toMatchObject({ require_signature: true, replaces_key_id: own.id });
    expect(successor.signing_secret).toMatch(SIGNING_SECRET_PATTERN);
    expect(successor.signing_secret).not.toBe(own.signingSecret);
    const withSecret = (secret: string) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = signatureOf(secret, { timestamp, method: 'GET', pathWithQuery: '/v1/usage', body: '' });
      return suite.t.request({ method: 'GET', url: '/v1/usage', key: successor.key, headers: { 'x-timestamp': timestamp, 'x-signature': signature } });
    };
    expect((await withSecret(successor.signing_secret)).statusCode).toBe(200);
    expect((await withSecret(own.signingSecret)).statusCode).toBe(401);
  });

  it('the operator CLI creates a signing key: tos keys create --account … --require-signature', async () => {
    const { stdout } = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, 'keys', 'create', '--account', 'acme', '--name', 'ops-signer', '--require-signature', '--json'], {
      env: { ...process.env, ...suite.env, NODE_OPTIONS: '' },
    });
    const created = JSON.parse(stdout);
    expect(created).toMatchObject({ require_signature: true });
    expect(created.signing_secret).toMatch(SIGNING_SECRET_PATTERN);
    const unsigned = await suite.t.request({ method: 'GET', url: '/v1/usage', key: created.key });
    expect(unsigned.statusCode).toBe(401);
    const headers = signatureHeaders(created.signing_secret, { method: 'GET', pathWithQuery: '/v1/usage', body: '' });
    expect((await suite.t.request({ method: 'GET', url: '/v1/usage', key: created.key, headers })).statusCode).toBe(200);
  });

  if (mode.name === 'embedded') {
    describe('the tos client', () => {
      let home: string;

      beforeAll(() => {
        home = mkdtempSync(path.join(tmpdir(), 'tos-signing-'));
      });
      afterAll(() => rmSync(home, { recursive: true, force: true }));

      const tos = async (args: string[], env: Record<string, string>, stdin = '') => {
        try {
          const running = run(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args], { env: { PATH: process.env.PATH!, XDG_CONFIG_HOME: home, ...env } });
          running.child.stdin!.end(stdin);
          const { stdout, stderr } = await running;
          return { code: 0, stdout, stderr };
        } catch (err) {
          return err as { code: number; stdout: string; stderr: string };
        }
      };

      it('signs every request when TOS_SIGNING_SECRET is set, and is refused without it', async () => {
        const unsigned = await tos(['whoami'], { TOS_URL: url, TOS_API_KEY: signer.key });
        expect(unsigned.code).toBe(1);
        expect(unsigned.stderr).toMatch(/requires signed requests/);
        const signed = await tos(['keys', 'create', '--name', 'cli-made', '--type', 'user', '--output', 'json'], { TOS_URL: url, TOS_API_KEY: signer.key, TOS_SIGNING_SECRET: signer.signingSecret });
        expect(signed.code).toBe(0);
        expect(JSON.parse(signed.stdout)).toMatchObject({ name: 'cli-made', type: 'user' });
      });

      it('tos login --signing-secret-file saves the secret in the profile, which then signs', async () => {
        const secretFile = path.join(home, 'signing-secret');
        writeFileSync(secretFile, `${signer.signingSecret}\n`, { mode: 0o600 });
        const login = await tos(['login', '--url', url, '--signing-secret-file', secretFile, '--output', 'json'], {}, signer.key);
        expect(login.code).toBe(0);
        expect(JSON.parse(login.stdout)).toMatchObject({ key_id: signer.id });
        const listed = await tos(['keys', 'list', '--output', 'json'], {});
        expect(listed.code).toBe(0);
        expect(JSON.parse(listed.stdout).map((k: { id: string }) => k.id)).toContain(signer.id);
      });
    });
  }
});
