import Fastify, { type FastifyReply } from 'fastify';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { callerGone } from './caller-gone';

/** On a listening Fastify: a client that leaves, a signal made before and one made after it left. */
describe('callerGone', () => {
  it('aborts when the client leaves unanswered, and is made aborted once it has left', async () => {
    const app = Fastify();
    let reply!: FastifyReply;
    const arrived = new Promise<void>((resolve) =>
      app.get('/slow', (_request, r) => {
        reply = r;
        resolve();
        return new Promise(() => undefined); // never answers
      }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const client = request({ port: (app.server.address() as AddressInfo).port, path: '/slow' }).on('error', () => undefined);
      client.end();
      await arrived;
      const before = callerGone(reply);
      expect(before.aborted).toBe(false);
      client.destroy();
      await sleep(100);
      expect(before.aborted).toBe(true);
      expect(callerGone(reply).aborted).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('stays quiet once the answer was written', async () => {
    const app = Fastify();
    let signal!: AbortSignal;
    app.get('/fast', (_request, reply) => {
      signal = callerGone(reply);
      return { ok: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await (await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/fast`)).json();
      await sleep(50);
      expect(signal.aborted).toBe(false);
    } finally {
      await app.close();
    }
  });
});
