import { Injectable, OnModuleDestroy } from '@nestjs/common';
import * as path from 'node:path';
import { AppConfig } from '../../config/app-config';
import type { ToolContextParts } from '../context/tool-context';
import { ToolError } from '../sdk';
import { FairSlots } from './fair-slots';
import { ToolHost, ToolHostEnded } from './tool-host';
import type { ToolSource } from './tool-source';
import type { ThreadMessage, ThreadOutcome, ThreadTask } from './tool-thread.worker';

/** Idle threads end after this long; the next isolated call starts one again. */
const IDLE_THREAD_MS = 60_000;

/**
 * The worker-thread pool of `isolated` tools: a call that ignores its signal (a catastrophic
 * regular expression, a runaway loop) is stopped by terminating its thread, so the event loop
 * of the API never waits on a tool and every timeout holds. The threads live in the tool host, a
 * process of their own that may write no file (see ToolHost). Started on first use.
 *
 * Calls wait for a thread in FairSlots (a share per account, round-robin), never in Piscina:
 * Piscina dispatches its queue only when a thread starts or finishes a task, and a thread
 * terminated by an abort does neither (with minThreads 0 none replaces it), so calls queued
 * in Piscina behind it waited until their own timeout.
 */
@Injectable()
export class ToolThreads implements OnModuleDestroy {
  private pool?: ToolHost;
  private readonly slots: FairSlots;
  /** Where each running call's progress and log lines go, by execution id. */
  private readonly relays = new Map<string, (message: ThreadMessage) => void>();

  constructor(private readonly config: AppConfig) {
    this.slots = new FairSlots(config.TOOL_THREADS, config.TOOL_THREADS_PER_ACCOUNT ?? Math.ceil(config.TOOL_THREADS / 2));
  }

  /**
   * Runs the tool in a thread, whose context the same factory makes from these parts. The thread
   * has no database, so the calling account's values of the tool's declared secret settings
   * (`secretNames`) are looked up here and travel with the task.
   */
  async run(source: ToolSource, input: Record<string, unknown>, ctx: ToolContextParts, secretNames: readonly string[] = []): Promise<unknown> {
    const accountSecrets: Record<string, string> = {};
    if (ctx.accountId && ctx.accountSecrets) {
      for (const name of secretNames) {
        const value = await ctx.accountSecrets.find(ctx.accountId, name);
        if (value !== undefined) accountSecrets[name] = value;
      }
    }
    let ended!: () => void;
    const lastMessage = new Promise<void>((resolve) => (ended = resolve));
    this.relays.set(ctx.executionId, (message) => {
      if (message.kind === 'end') ended();
      else if (message.kind === 'progress') ctx.progress(message.percent, message.message);
      else ctx.logger[message.level](message.message, message.meta);
    });
    const task: ThreadTask = {
      ...source,
      input,
      executionId: ctx.executionId,
      config: ctx.config,
      workspaceRoot: ctx.workspace.root,
      egress: ctx.egress,
      accountId: ctx.accountId,
      accountSecrets,
    };
    try {
      const outcome = await this.runInThread(task, ctx);
      // The outcome comes from Piscina's own port, the messages from the thread's parentPort: the two
      // are not ordered, so wait for the call's last message, or its last progress could be lost.
      await lastMessage;
      if (outcome.ok) return outcome.output;
      const { message, ...options } = outcome.error;
      throw new ToolError(message, options);
    } finally {
      this.relays.delete(ctx.executionId);
    }
  }

  private async runInThread(task: ThreadTask, ctx: ToolContextParts): Promise<ThreadOutcome> {
    // Calls without an account (the operator's own) share one queue.
    const release = await this.slots.acquire(ctx.accountId ?? '', ctx.signal);
    try {
      // An abort rejects at once and terminates the thread if the task is running.
      return (await this.threads().run(task, ctx.signal)) as ThreadOutcome;
    } catch (error) {
      // Whatever ended the host (V8 aborts the whole process when one allocation overshoots a
      // thread's heap) may have been another call's doing: this one is worth retrying.
      if (error instanceof ToolHostEnded) throw new ToolError(error.message, { retryable: true, suggestion: 'Retry the call; a call that ends the process again is refused the same way' });
      if ((error as { code?: string }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error;
      // The input asked for more than a thread may hold (a memory bomb, an oversized document): the same input fails again.
      const limit = this.config.TOOL_THREAD_MAX_MEMORY_MB;
      throw new ToolError(`The tool ran out of memory: this input needs more than the ${limit} MB heap a tool thread may use (TOOL_THREAD_MAX_MEMORY_MB)`, {
        code: 'INVALID_INPUT',
        details: { expected: `an input the tool processes within ${limit} MB of heap`, memory_limit_mb: limit },
        suggestion: 'Send a smaller input, or one that builds less data',
      });
    } finally {
      release();
    }
  }

  onModuleDestroy(): void {
    this.pool?.destroy();
  }

  private threads(): ToolHost {
    // What a thread posts on its parentPort arrives here, once per pool; a channel per call cost more than the call.
    this.pool ??= new ToolHost({ workerFile: WORKER_FILE, threads: this.config.TOOL_THREADS, idleTimeoutMs: IDLE_THREAD_MS, threadHeapMb: this.config.TOOL_THREAD_MAX_MEMORY_MB }, (message) =>
      this.relays.get((message as ThreadMessage).executionId)?.(message as ThreadMessage),
    );
    return this.pool;
  }
}

const WORKER_FILE = path.join(__dirname, `tool-thread.worker${path.extname(__filename)}`);
