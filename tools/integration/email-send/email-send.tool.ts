import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type EmailSendInput = ToolInput<typeof definition>;

type EmailSendOutput = ToolOutput<typeof definition>;

const ADDRESSES = (description: string) => ({ type: 'array', maxItems: 50, items: { type: 'string', format: 'email', maxLength: 254 }, description }) as const;

/** SMTP reply codes a caller can act on by changing the message (mailbox or syntax). */
const CALLERS_FAULT = new Set([501, 550, 551, 552, 553, 554]);

const definition = defineTool({
  id: 'email-send',
  name: 'Email Send',
  category: 'integration',
  description:
    "Sends an email (to, cc, bcc, subject, text and/or html) over SMTP with nodemailer. The server is SMTP_URL (smtp:// with STARTTLS when offered, smtps:// for implicit TLS, credentials in the URL): the account's own secret of that name, else the operator's setting. Reports the message id and which recipients the server accepted.",
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 60,
  rate_limit: 30,
  input: {
    type: 'object',
    properties: {
      to: { ...ADDRESSES('Recipients (1 to 50).'), minItems: 1 },
      cc: ADDRESSES('Copy recipients.'),
      bcc: ADDRESSES('Blind copy recipients (not shown in the message).'),
      subject: { type: 'string', minLength: 1, maxLength: 998, description: 'The subject line.' },
      text: { type: 'string', maxLength: 100_000, description: 'Plain-text body; give text, html or both.' },
      html: { type: 'string', maxLength: 500_000, description: 'HTML body.' },
      from: { type: 'string', format: 'email', maxLength: 254, description: 'Sender address; SMTP_FROM when omitted.' },
      reply_to: { type: 'string', format: 'email', maxLength: 254, description: 'Reply-To address.' },
      timeout_ms: { type: 'integer', minimum: 1000, maximum: 30_000, default: 15_000, description: 'How long the SMTP conversation may take.' },
    },
    required: ['to', 'subject'],
  },
  output: {
    type: 'object',
    properties: {
      message_id: { type: 'string', description: 'The Message-ID header of the sent message.' },
      accepted: { type: 'array', items: { type: 'string' }, description: 'Recipients the server accepted.' },
      rejected: { type: 'array', items: { type: 'string' }, description: 'Recipients the server refused (the message went to the others).' },
      response: { type: 'string', description: "The server's final reply." },
      duration_ms: { type: 'number', description: 'Wall time of the SMTP conversation.' },
    },
    required: ['message_id', 'accepted', 'rejected', 'response', 'duration_ms'],
  },
  config: {
    SMTP_URL: { type: 'string', secret: true, description: "smtp://user:pass@host:587 or smtps://…:465; an account's own secret of that name wins." },
    SMTP_FROM: { type: 'string', default: 'tool-orchestration-service@localhost', description: 'Sender address when the call names none.' },
  },
  examples: [
    {
      name: 'A deploy notice to the on-call list',
      input: { to: ['oncall@example.test'], subject: 'api 1.4.2 deployed', text: 'Deployed at 14:02 UTC by the release pipeline.' },
      output: { message_id: '<6c1e…@example.test>', accepted: ['oncall@example.test'], rejected: [], response: '250 OK: message queued', duration_ms: 25 },
      varies: ['message_id', 'duration_ms'],
    },
  ],
});

@Tool(definition)
export class EmailSendTool implements ToolHandler<typeof definition> {
  async execute(input: EmailSendInput, ctx: ToolContext<typeof definition>): Promise<EmailSendOutput> {
    if (input.text === undefined && input.html === undefined) throw ToolError.invalidInput('text', "a body: 'text', 'html' or both");
    const server = parseSmtpUrl(await ctx.secrets.get('SMTP_URL'));
    // The policy checks the server's address, and the connection is pinned to it (no second lookup to rebind).
    const { address } = await ctx.net.resolve(server.hostname, { parameter: 'SMTP_URL' });
    // nodemailer loads on the first message, not with the catalogue.
    const { createTransport } = await import('nodemailer');
    const transport = createTransport({
      host: address,
      port: server.port,
      secure: server.secure,
      auth: server.user ? { user: server.user, pass: server.pass } : undefined,
      // STARTTLS (or smtps) verifies the server's name against the certificates the service trusts.
      tls: { servername: server.hostname, ...(ctx.net.trustedCa && { ca: [...ctx.net.trustedCa] }) },
      name: 'tool-orchestration-service',
      connectionTimeout: input.timeout_ms,
      greetingTimeout: input.timeout_ms,
      socketTimeout: input.timeout_ms,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const started = performance.now();
    const onAbort = () => transport.close();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const from = input.from ?? String(ctx.config.SMTP_FROM);
      const sent = transport.sendMail({
        // Derived from the execution id, so a mail of the same execution sent again carries the same Message-ID.
        messageId: `<${ctx.executionId}@${from.slice(from.lastIndexOf('@') + 1).replace(/[>\s]/g, '')}>`,
        from,
        to: input.to,
        cc: input.cc,
        bcc: input.bcc,
        replyTo: input.reply_to,
        subject: input.subject,
        text: input.text,
        html: input.html,
      });
      const info = await Promise.race([sent, new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }))]);
      return {
        message_id: info.messageId,
        accepted: info.accepted.map(String),
        rejected: info.rejected.map(String),
        response: info.response,
        duration_ms: Math.round(performance.now() - started),
      };
    } catch (err) {
      throw smtpFailure(err, ctx.signal);
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      transport.close();
    }
  }
}

interface SmtpServer {
  hostname: string;
  port: number;
  secure: boolean;
  user?: string;
  pass?: string;
}

function parseSmtpUrl(raw: string): SmtpServer {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError('SMTP_URL is not a URL', { details: { setting: 'SMTP_URL' }, suggestion: 'Set it to smtp://user:pass@host:587 or smtps://user:pass@host:465' });
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new ToolError(`SMTP_URL must be smtp:// or smtps://, not ${url.protocol}//`, { details: { setting: 'SMTP_URL' } });
  }
  const secure = url.protocol === 'smtps:';
  return {
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(url.username && { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }),
  };
}

/** nodemailer's errors (SMTP reply codes, connection failures) as the ToolError a caller can act on. */
function smtpFailure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ToolError) return err;
  const failure = err as { code?: string; responseCode?: number; response?: string; rejected?: string[] };
  const details = { upstream: { service: 'smtp', ...(failure.responseCode && { status: failure.responseCode }) } };
  if (failure.code === 'EAUTH') {
    return new ToolError('The SMTP server refused the credentials', { details, suggestion: 'Set SMTP_URL with valid credentials: PUT /v1/secrets/SMTP_URL' });
  }
  if (failure.code === 'EENVELOPE' && failure.rejected?.length) {
    return new ToolError(`The SMTP server refused every recipient: ${failure.response ?? ''}`.trim(), {
      code: 'INVALID_INPUT',
      details: { ...details, parameter: 'to', received: failure.rejected },
    });
  }
  if (/certificate|self.signed|unable to verify/i.test((err as Error).message ?? '')) {
    return new ToolError(`The SMTP server's TLS certificate failed verification: ${(err as Error).message}`, {
      details,
      suggestion: "Use the server's own name in SMTP_URL; a private CA must be in the operator's EGRESS_CA_FILE",
    });
  }
  if (failure.responseCode) {
    const permanent = failure.responseCode >= 500;
    return new ToolError(`The SMTP server answered ${failure.response ?? failure.responseCode}`, {
      code: permanent && CALLERS_FAULT.has(failure.responseCode) ? 'INVALID_INPUT' : 'TOOL_ERROR',
      retryable: !permanent,
      details: { ...details, ...(permanent && CALLERS_FAULT.has(failure.responseCode) && { parameter: 'to' }) },
    });
  }
  return new ToolError(`Could not reach the SMTP server: ${failure.code ?? (err as Error).message}`, { retryable: true, details: { ...details, ...(failure.code && { error: failure.code }) } });
}
