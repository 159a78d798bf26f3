import type { FastifyReply } from 'fastify';

/** Aborts when the client disconnects before its answer is written (its execution is then cancelled). */
export function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
