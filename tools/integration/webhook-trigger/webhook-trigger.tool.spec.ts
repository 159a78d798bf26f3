import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runTool } from '@tos/sdk/testing';
import { Webhook } from 'standardwebhooks';
import { startRecordingServer, type RecordedRequest, type RecordingServer } from '../../../test/support/recording-server';
import { WebhookTriggerTool } from './webhook-trigger.tool';

describe('webhook-trigger', () => {
  let server: RecordingServer;
  let base: string;
  let received: RecordedRequest[];
  let answers: [number, Record<string, string>][] = [];
  beforeAll(async () => {
    server = await startRecordingServer(({ url }) => {
      if (url === '/hang') return null;
      const [status, headers] = answers.shift() ?? [200, {}];
      return { status, headers, body: status === 200 ? 'ok' : 'no' };
    });
    base = server.url;
    received = server.received;
  });
  beforeEach(() => {
    server.clear();
    answers = [];
  });
  afterAll(() => server.close());

  it('delivers a signed payload (sha256 HMAC and Standard Webhooks headers)', async () => {
    const out = await runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: { event: 'deploy' }, secret_name: 'HOOK_SECRET' }, { secrets: { HOOK_SECRET: 'whsec-test-1' } });
    expect(out).toMatchObject({ status: 200, attempts: 1, delivered: true, response_body: 'ok', signed: true });
    const [{ headers, body }] = received;
    expect(body).toBe('{"event":"deploy"}');
    expect(headers['x-signature']).toBe(`sha256=${createHmac('sha256', 'whsec-test-1').update(body).digest('hex')}`);
    const expected = createHmac('sha256', 'whsec-test-1').update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('signs webhook-signature so the official standardwebhooks verifier accepts it: a whsec_ secret keys with its base64-decoded bytes', async () => {
    // The Standard Webhooks specification's example secret.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    await runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: { event: 'deploy', version: '1.4.2' }, secret });
    const [{ headers, body }] = received;
    expect(new Webhook(secret).verify(body, headers as Record<string, string>)).toEqual({ event: 'deploy', version: '1.4.2' });
    // X-Signature stays an HMAC keyed by the secret as given (GitHub's scheme).
    expect(headers['x-signature']).toBe(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  });

  it('signs with the bytes of a secret without the whsec_ prefix (the verifier\'s raw format), and refuses a whsec_ secret that is not base64', async () => {
    await runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: { n: 1 }, secret: 'plain-secret-1' });
    const [{ headers, body }] = received;
    expect(new Webhook('plain-secret-1', { format: 'raw' }).verify(body, headers as Record<string, string>)).toEqual({ n: 1 });
    server.clear();
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, secret: 'whsec_not*base64' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'secret' } });
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, secret_name: 'BAD' }, { secrets: { BAD: 'whsec_abc' } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { parameter: 'secret_name' },
    });
    expect(received).toEqual([]);
  });

  it('retries a 503 honouring Retry-After, then succeeds', async () => {
    answers = [[503, { 'retry-after': '1' }]];
    const started = Date.now();
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {} })).resolves.toMatchObject({ status: 200, attempts: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('sends the execution id as webhook-id, signed or not, so a receiver can drop a duplicate', async () => {
    await runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {} }, { executionId: 'exec_0123456789abcdefghijklmn' });
    expect(received[0].headers['webhook-id']).toBe('exec_0123456789abcdefghijklmn');
  });

  it('keeps one webhook-id across retries and signs each attempt again', async () => {
    answers = [[502, {}]];
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: { n: 1 }, secret: 'whsec-retries' })).resolves.toMatchObject({ status: 200, attempts: 2, signed: true });
    const [first, second] = received;
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    for (const { headers, body } of received) {
      const expected = createHmac('sha256', 'whsec-retries').update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
      expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    }
  });

  it('sends extra headers but never lets them override the signature or content type', async () => {
    await runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, secret: 'whsec-headers', headers: { 'X-Event': 'deploy', 'Content-Type': 'text/plain', 'X-Signature': 'forged' } });
    const [{ headers, body }] = received;
    expect(headers['x-event']).toBe('deploy');
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-signature']).toBe(`sha256=${createHmac('sha256', 'whsec-headers').update(body).digest('hex')}`);
  });

  it('fails retryable after the last attempt when the receiver cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(runTool(WebhookTriggerTool, { url: `http://127.0.0.1:${port}/hook`, payload: {}, max_attempts: 2 })).rejects.toMatchObject({
      code: 'TOOL_ERROR',
      retryable: true,
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('does not retry a 400 and reports it', async () => {
    answers = [[400, {}]];
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {} })).resolves.toMatchObject({ status: 400, attempts: 1, delivered: false });
  });

  it('gives up after max_attempts of 500', async () => {
    answers = [[500, {}], [500, {}]];
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, max_attempts: 2 })).resolves.toMatchObject({ status: 500, attempts: 2, delivered: false });
  });

  it.each(['http://10.0.0.1/hook', 'http://169.254.169.254/latest', 'http://[::1]:1/'])('refuses %s without loopback allowed, as INVALID_INPUT on url', async (url) => {
    await expect(runTool(WebhookTriggerTool, { url, payload: {} }, { egressAllow: '' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url' } });
  });

  it('rejects bad input and a missing named secret', async () => {
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, max_attempts: 9 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hook`, payload: {}, secret_name: 'NOPE' })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: false });
  });

  it('stops when cancelled mid-call', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    await expect(runTool(WebhookTriggerTool, { url: `${base}/hang`, payload: {} }, { signal: controller.signal })).rejects.toThrow('cancelled');
  });
});
