import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client disconnects before its answer is written (its execution is then
 * cancelled); already aborted if it has.
 */
export function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const abortIfUnanswered = () => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  if (reply.raw.closed) abortIfUnanswered();
  else reply.raw.once('close', abortIfUnanswered);
  return controller.signal;
}
