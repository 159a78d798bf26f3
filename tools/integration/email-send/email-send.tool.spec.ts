import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { certificateAuthority } from '../../../test/support/test-ca';
import { SMTP_PASS, SMTP_USER, startSmtpFake, type SmtpFake } from '../../../test/support/smtp/smtp-fake';
import { EmailSendTool } from './email-send.tool';

describe('email-send', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'email-send-'));
  const ca = certificateAuthority(dir, { name: 'Mail Test CA' });
  let smtp: SmtpFake;
  const smtpUrl = (credentials = '') => `smtp://${credentials}127.0.0.1:${smtp.port}`;
  const send = (input: Record<string, unknown>, secrets: Record<string, string> = {}, extra = {}) =>
    runTool(EmailSendTool, { to: ['ops@example.test'], subject: 'hello', text: 'body', ...input }, { config: { SMTP_URL: smtpUrl(), SMTP_FROM: 'ci@example.test' }, secrets, tlsCa: ca.certificate, ...extra });

  beforeAll(async () => {
    smtp = await startSmtpFake(ca.issue(['localhost'], { days: 10 }));
  });
  beforeEach(() => smtp.received.splice(0));
  afterAll(async () => {
    await smtp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends text and html to to, cc and bcc, and reports what the server accepted', async () => {
    const out = await send({ to: ['a@example.test', 'b@example.test'], cc: ['c@example.test'], bcc: ['d@example.test'], html: '<p>body</p>', reply_to: 'r@example.test' });
    expect(out).toMatchObject({ accepted: ['a@example.test', 'b@example.test', 'c@example.test', 'd@example.test'], rejected: [], response: expect.stringMatching(/^250 /) });
    expect(out.message_id).toBe('<exec_runtool@example.test>');
    const [mail] = smtp.received;
    expect(mail.tls).toBe(true); // upgraded with STARTTLS, the server's certificate verified
    expect(mail.from).toBe('ci@example.test');
    expect(mail.to).toEqual(['a@example.test', 'b@example.test', 'c@example.test', 'd@example.test']);
    expect(mail.raw).toMatch(/^Subject: hello$/m);
    expect(mail.raw).toMatch(/^Message-ID: <exec_runtool@example.test>$/m); // a receiver can drop a second delivery
    expect(mail.raw).toMatch(/^Reply-To: r@example.test$/m);
    expect(mail.raw).not.toMatch(/^Bcc:/m);
    expect(mail.raw).toContain('<p>body</p>');
  });

  it("authenticates with the account's own SMTP_URL, which wins over the operator's", async () => {
    await expect(send({}, { SMTP_URL: smtpUrl(`${SMTP_USER}:${SMTP_PASS}@`) })).resolves.toMatchObject({ accepted: ['ops@example.test'] });
    expect(smtp.received[0]).toMatchObject({ tls: true, user: SMTP_USER });
    expect(await toolFailure(send({}, { SMTP_URL: smtpUrl(`${SMTP_USER}:wrong@`) }))).toMatchObject({
      code: 'TOOL_ERROR',
      retryable: false,
      details: { upstream: { service: 'smtp', status: 535 } },
      suggestion: expect.stringContaining('/v1/secrets/SMTP_URL'),
    });
  });

  it('reports refused recipients; when all are refused it is the caller’s fault, naming to', async () => {
    await expect(send({ to: ['ok@example.test', 'nobody@example.test'] })).resolves.toMatchObject({ accepted: ['ok@example.test'], rejected: ['nobody@example.test'] });
    expect(await toolFailure(send({ to: ['nobody@example.test'] }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'to', received: ['nobody@example.test'] } });
  });

  it('a temporary refusal (4xx) and an unreachable server are retryable', async () => {
    expect(await toolFailure(send({ subject: 'try later' }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { status: 451 } } });
    expect(await toolFailure(runTool(EmailSendTool, { to: ['a@example.test'], subject: 's', text: 't' }, { config: { SMTP_URL: 'smtp://127.0.0.1:1' } }))).toMatchObject({
      code: 'TOOL_ERROR',
      retryable: true,
    });
  });

  it('refuses a server whose certificate it does not trust (no fallback to plain text)', async () => {
    expect(await toolFailure(send({}, {}, { tlsCa: undefined }))).toMatchObject({ code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('certificate'), suggestion: expect.stringContaining('EGRESS_CA_FILE') });
    expect(smtp.received).toEqual([]);
  });

  it('needs an SMTP server, and says how to set one', async () => {
    expect(await toolFailure(runTool(EmailSendTool, { to: ['a@example.test'], subject: 's', text: 't' }))).toMatchObject({ code: 'TOOL_ERROR', message: "Secret 'SMTP_URL' is not set" });
    expect(await toolFailure(send({}, { SMTP_URL: 'https://mail.example.test' }))).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('smtp://') });
  });

  it.each([
    [{ text: undefined }, 'text'],
    [{ to: [] }, 'to'],
    [{ to: ['not-an-address'] }, 'to[0]'],
    [{ subject: '' }, 'subject'],
    [{ to: Array.from({ length: 51 }, (_, i) => `u${i}@example.test`) }, 'to'],
  ])('%j is refused naming %s', async (input, parameter) => {
    expect(await toolFailure(send(input))).toMatchObject({ details: { parameter } });
  });

  it('refuses a server at a refused address by default, naming SMTP_URL', async () => {
    expect(await toolFailure(send({}, {}, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'SMTP_URL', expected: 'a public address' } });
    expect(smtp.received).toEqual([]);
  });

  it('stops when cancelled mid-conversation', async () => {
    const silent: Server = createServer(() => undefined); // accepts, never greets
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    const started = Date.now();
    try {
      await expect(
        runTool(EmailSendTool, { to: ['a@example.test'], subject: 's', text: 't', timeout_ms: 30_000 }, { config: { SMTP_URL: `smtp://127.0.0.1:${port}` }, signal: controller.signal }),
      ).rejects.toThrow('cancelled');
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      silent.close();
    }
  });
});
