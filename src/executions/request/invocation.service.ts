import { Injectable } from '@nestjs/common';
import { AppException, ERROR_STATUS } from '../../common/errors';
import { etagOf } from '../../common/http-cache';
import { cacheScope, ResultCache, resultCacheKey } from '../../cache/result-cache';
import type { Execution } from '../engine/execution.entity';
import { ExecutionRunner, RunRequest } from '../engine/execution-runner';
import { cacheLookups } from '../../common/probes';
import { AdmissionGate, type ToolWindow } from '../../limits/admission-gate';
import { WorkspacesService } from '../../workspaces/workspaces.service';
import type { Principal } from '../../identity/principal';
import type { InputRequest } from '../../tools/sdk';
import { InputRounds } from './input-rounds';

/** The result cache's part in an answer (docs/API.md#caching). */
export interface CacheUse {
  hit: boolean;
  /** Seconds the result stays cached. */
  ttl: number;
  etag: string;
  /** Epoch ms the result was stored. */
  storedAt: number;
}

/** A sync call as the doors hand it over; what stops it is made only if the tool runs (a cache hit needs nothing). */
export interface SyncRun extends Omit<RunRequest, 'callerGone' | 'asking'> {
  callerGone?: () => AbortSignal;
  /** Set by a door that can carry the tool's questions to its caller (`ctx.requestInput`). */
  answering?: CallerAnswers;
}

/** What a caller that can be asked brings back: nothing on a first call. */
export interface CallerAnswers {
  /** Its answers to the last round's questions, by question key. */
  responses?: Record<string, unknown>;
  /** The state the last round handed it (InputRounds). */
  state?: string;
  /** The input request methods it can answer; every one when absent. */
  methods?: ReadonlySet<InputRequest['method']>;
}

/** A sync call that stopped at questions for its caller: it calls again with the answers and `requestState`. */
export interface SyncQuestion {
  inputRequests: Record<string, InputRequest>;
  requestState: string;
  executionMs: number;
  window: ToolWindow | null;
}

export interface SyncInvocation {
  execution: Pick<Execution, 'id' | 'status' | 'result' | 'error'>;
  /** Time spent inside the tool; 0 for a cache hit. */
  executionMs: number;
  /** Null when the tool is not cacheable. */
  cache: CacheUse | null;
  /** The tool window the call was counted in (none for enterprise accounts): REST writes it as X-RateLimit-*. */
  window: ToolWindow | null;
  /** False when the tool ran but no record of it could be written. */
  recorded: boolean;
}

/**
 * A tool call as every door (REST invoke, MCP tools/call) makes it, once its input is valid:
 * admission (the AdmissionGate), then for a sync call a cached result of a cacheable tool when
 * allowed, else a run through the ExecutionRunner whose successful result is cached; for an async
 * call, the queue. Rendering happens after, at the door.
 */
@Injectable()
export class InvocationService {
  constructor(
    private readonly runner: ExecutionRunner,
    private readonly cache: ResultCache,
    private readonly gate: AdmissionGate,
    private readonly workspaces: WorkspacesService,
    private readonly rounds: InputRounds,
  ) {}

  /** Admits and queues an async call; the tool window it was counted in comes back for the headers. */
  async submit(run: RunRequest): Promise<{ execution: Execution; window: ToolWindow | null }> {
    await this.workspaceDigest(run.principal, run.input);
    const window = await this.gate.admit(run.principal, run.tool.definition);
    return { execution: await this.runner.submit(run), window };
  }

  /**
   * The content digest of the account's workspace a call names (NOT_FOUND before anything is
   * counted or queued when it names none of its own); it enters the result-cache key.
   */
  private async workspaceDigest(principal: Principal, input: Record<string, unknown>): Promise<string | undefined> {
    return typeof input.workspace === 'string' ? this.workspaces.digestOf(principal.accountId, input.workspace) : undefined;
  }

  async invokeSync({ callerGone, answering, ...run }: SyncRun): Promise<SyncInvocation | SyncQuestion> {
    const { principal, tool, input, options } = run;
    const { definition } = tool;
    if (definition.task_support === 'required') {
      throw new AppException('INVALID_REQUEST', `Tool '${definition.id}' runs only in the background`, {
        details: { parameter: 'async' },
        suggestion: 'Invoke it with async=true and follow the execution it returns',
      });
    }
    const binding = { keyId: principal.keyId, subject: definition.id, input };
    const answers = answering && this.rounds.answersSoFar(binding, answering);
    // A result that took answers depends on them, which the cache key does not hold.
    const answered = answers !== undefined && Object.keys(answers).length > 0;
    const digest = await this.workspaceDigest(principal, input);
    const window = await this.gate.admit(principal, definition);
    const cacheKey = definition.cacheable && !answered ? resultCacheKey(principal.keyId, definition.id, definition.version, digest ? { ...input, workspace: { id: input.workspace, digest } } : input) : null;
    if (cacheKey && options.cache) {
      const hit = await this.cache.get(cacheKey);
      if (cacheLookups.hasSubscribers) cacheLookups.publish({ hit: !!hit });
      if (hit) {
        const ttl = Math.max(0, Math.ceil((hit.expires_at - Date.now()) / 1000));
        return {
          execution: { id: hit.execution_id, status: 'success', result: hit.result, error: null },
          executionMs: 0,
          cache: { hit: true, ttl, etag: hit.etag, storedAt: hit.stored_at },
          window,
          recorded: true,
        };
      }
    }
    const outcome = answers
      ? await this.runner.runSync({ ...run, callerGone: callerGone?.(), asking: { answers, methods: answering.methods } })
      : await this.runner.runSync({ ...run, callerGone: callerGone?.() });
    if ('inputRequests' in outcome) return { inputRequests: outcome.inputRequests, requestState: this.rounds.seal(binding, answers!), executionMs: outcome.executionMs, window };
    const { execution, executionMs, recorded } = outcome;
    if (!cacheKey || execution.status !== 'success') return { execution, executionMs, cache: null, window, recorded };
    const storedAt = Date.now();
    const etag = etagOf(JSON.stringify(execution.result));
    void this.cache.set(cacheKey, cacheScope(principal.keyId, definition.id), {
      execution_id: execution.id,
      result: execution.result!,
      etag,
      stored_at: storedAt,
      expires_at: storedAt + definition.cache_ttl * 1000,
    });
    return { execution, executionMs, cache: { hit: false, ttl: definition.cache_ttl, etag, storedAt }, window, recorded };
  }
}

/** A sync invocation's answer, as REST returns it and MCP carries it as text. */
export interface InvocationAnswer {
  httpStatus: number;
  body: Record<string, unknown>;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Said of a sync call whose record could not be written: it ran, so a blind retry would repeat its
 * effects, and its id is unknown to the executions endpoints.
 */
const UNRECORDED = {
  recorded: false,
  warning: 'The tool ran, but its execution record could not be written (database unavailable): this answer is its outcome; GET /v1/executions may not know this execution_id, or show it ended in error',
};

/** `totalMs` is the request's time so far; execution is tool time, processing the rest. */
export function invocationAnswer({ execution, executionMs, cache, recorded }: SyncInvocation, totalMs: number): InvocationAnswer {
  const answer = outcomeAnswer(execution, executionMs, cache, totalMs);
  return recorded ? answer : { ...answer, body: { ...answer.body, ...UNRECORDED } };
}

function outcomeAnswer(execution: SyncInvocation['execution'], executionMs: number, cache: CacheUse | null, totalMs: number): InvocationAnswer {
  if (execution.status === 'success') {
    const timing = { total_ms: round(totalMs), execution_ms: round(executionMs), processing_ms: round(Math.max(0, totalMs - executionMs)) };
    const body = { status: 'success', execution_id: execution.id, result: execution.result, timing, ...(cache && { cache: { hit: cache.hit, ttl: cache.ttl } }) };
    return { httpStatus: 200, body };
  }
  if (execution.status === 'cancelled') {
    return { httpStatus: 409, body: { status: 'cancelled', execution_id: execution.id, error: { code: 'CONFLICT', message: 'Execution was cancelled', retryable: false } } };
  }
  const error = execution.error!;
  return { httpStatus: ERROR_STATUS[error.code] ?? 500, body: { status: 'error', execution_id: execution.id, error } };
}
