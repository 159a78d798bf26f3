/**
 * A real SMTP server on loopback (the `smtp-server` package), as a mail relay behaves: STARTTLS
 * with the given certificate, AUTH only after it, recipients refused with 550, a message refused
 * with 451 (try later), every message kept with whether it came over TLS.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export const SMTP_USER = 'mailer';
export const SMTP_PASS = 'mailer-pass';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The session had been upgraded with STARTTLS. */
  tls: boolean;
  user?: string;
}

export interface SmtpFake {
  port: number;
  received: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpFake(certificate: { cert: string; key: string }, address = '127.0.0.1', port = 0): Promise<SmtpFake> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    ...certificate,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(recipient, _session, callback) {
      if (recipient.address.startsWith('nobody@')) return callback(Object.assign(new Error('No such user here'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk));
      stream.on('end', () => {
        if (/^Subject: try later/m.test(raw)) return callback(Object.assign(new Error('Mailbox busy, try later'), { responseCode: 451 }));
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          tls: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
