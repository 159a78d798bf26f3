import type { InputRequest, ToolContext, ToolHandler } from './sdk';

/** A tool's run: its up-front questions (`ask`), then its work. */
export async function askThenExecute(handler: ToolHandler, input: Record<string, unknown>, ctx: ToolContext): Promise<Record<string, unknown>> {
  await handler.ask?.(input, ctx);
  return handler.execute(input, ctx);
}

/**
 * `requestInput` of a run whose caller can be asked (a tool's, a prompt's): the answer the caller
 * brought, else the question is noted in `asked` and the run stops — `stop` is called once, a
 * tick after the first question, so questions asked together (as with Promise.all) reach the
 * caller together; the pending question rejects when `stopped` fires.
 */
export function answerOrAsk(
  key: string,
  request: InputRequest,
  answers: Readonly<Record<string, unknown>>,
  asked: Record<string, InputRequest>,
  stop: () => void,
  stopped: AbortSignal,
): Promise<Record<string, unknown>> {
  if (Object.hasOwn(answers, key)) return Promise.resolve(answers[key] as Record<string, unknown>);
  if (Object.keys(asked).length === 0) setImmediate(stop);
  asked[key] = request;
  return rejectOnAbort(stopped);
}

/** A promise that rejects with the signal's reason when it fires. */
export function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
