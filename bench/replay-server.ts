/**
 * The same-bytes yardstick: raw Fastify answering every request with exactly the status, headers
 * and body one service answer had (read from REPLAY_FILE), so a ratio against it shows what our
 * code costs, not what our bytes cost. Run as a child process.
 */
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';

export interface CapturedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers the server computes for each answer itself. */
const COMPUTED = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

if (require.main === module) {
  const answer = JSON.parse(readFileSync(process.env.REPLAY_FILE!, 'utf8')) as CapturedAnswer;
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !COMPUTED.has(name)));
  // Bytes made once, as a pre-serialised answer of the service is: raw Fastify at its fastest.
  const body = Buffer.from(answer.body);
  const app = Fastify({ logger: false });
  // Bodies are read like the service reads them, then ignored.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.all('/*', async (_request, reply) => reply.code(answer.status).headers(headers).send(body));
  app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
