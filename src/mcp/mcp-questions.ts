import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppException } from '../common/errors';
import type { InputRounds, RoundBinding } from '../executions/request/input-rounds';
import type { CallerAnswers } from '../executions/request/invocation.service';
import { answerOrAsk, rejectOnAbort } from '../tools/caller-questions';
import type { AskingContext, InputRequest } from '../tools/sdk';
import { missingCapability } from './mcp-replies';

/**
 * What a 2026-07-28 request brings for the questions a tool or prompt asks (SEP-2322): its
 * answers and state from the last round, and the input request methods its capabilities answer.
 */
export type Answering = CallerAnswers & Required<Pick<CallerAnswers, 'methods'>>;

/** The answer of 2026-07-28 to a request whose tool or prompt asked its caller. */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests: Record<string, InputRequest>;
  requestState: string;
}

/** The client capability each input request method needs. */
const CAPABILITY_OF: Record<InputRequest['method'], string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

/** The input request methods a client with these capabilities answers. */
export function answerableMethods(capabilities: Record<string, unknown>): ReadonlySet<InputRequest['method']> {
  return new Set((Object.keys(CAPABILITY_OF) as InputRequest['method'][]).filter((method) => capabilities[CAPABILITY_OF[method]] !== undefined));
}

/** The questions, if the client declared every capability they need (it must not be sent one it cannot answer). */
export function inputRequired(inputRequests: Record<string, InputRequest>, requestState: string, answerable: ReadonlySet<InputRequest['method']>): InputRequiredResult {
  const lacking = [...new Set(Object.values(inputRequests).filter(({ method }) => !answerable.has(method)).map(({ method }) => CAPABILITY_OF[method]))];
  if (lacking.length > 0) throw missingCapability(lacking.join(', '), Object.fromEntries(lacking.map((capability) => [capability, {}])));
  return { resultType: 'input_required', inputRequests, requestState };
}

/**
 * One round of the questions code at the door asks (a prompt, a tool's `ask`): what `run` gives
 * once every question it asks has an answer so far, with those answers; else the open questions
 * and the state to bring back. As a tool's run, `run` stops at its first unanswered question(s)
 * and runs again from the start with the answers.
 */
export async function askingRound<T>(
  rounds: InputRounds,
  binding: RoundBinding,
  answering: Answering,
  run: (ctx: AskingContext) => Promise<T>,
): Promise<{ value: T; answers: Record<string, unknown> } | InputRequiredResult> {
  let answers: Record<string, unknown>;
  try {
    answers = rounds.answersSoFar(binding, answering);
  } catch (err) {
    throw stateRefusal(err) ?? err;
  }
  const asked: Record<string, InputRequest> = {};
  const stop = new AbortController();
  const ctx: AskingContext = {
    requestInput: (key, request) => answerOrAsk(key, request, answers, asked, () => stop.abort(), stop.signal),
    canAsk: (method) => answering.methods.has(method),
  };
  try {
    return { value: await Promise.race([run(ctx), rejectOnAbort(stop.signal)]), answers };
  } catch (err) {
    if (!stop.signal.aborted) throw err;
    return inputRequired(asked, rounds.seal(binding, answers), answering.methods);
  }
}

/** A requestState that does not hold (InputRounds) is a fault of the request itself: invalid params. */
export function stateRefusal(err: unknown): McpError | undefined {
  if (err instanceof AppException && err.body.details?.parameter === 'request_state') return new McpError(ErrorCode.InvalidParams, err.message);
  return undefined;
}
