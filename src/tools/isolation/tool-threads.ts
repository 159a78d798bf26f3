import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import * as path from 'node:path';
import { AppConfig } from '../../config/app-config';
import type { ToolContextParts } from '../context/tool-context';
import { ToolError } from '../sdk';
import { ToolHost } from './tool-host';
import type { ToolSource } from './tool-source';
import type { ThreadMessage, ThreadOutcome, ThreadTask } from './tool-thread.worker';

/** Idle threads end after this long; the next isolated call starts one again. */
const IDLE_THREAD_MS = 60_000;

/**
 * The worker-thread pool of `isolated` tools: a call that ignores its signal (a catastrophic
 * regular expression, a runaway loop) is stopped by terminating its thread, so the event loop
 * of the API never waits on a tool and every timeout holds. Started on first use.
 */
@Injectable()
export class ToolThreads implements OnModuleDestroy {
  private readonly logger = new Logger(ToolThreads.name);
  private pool?: ToolHost;
  /** Where each running call's progress and log lines go, by execution id. */
  private readonly relays = new Map<string, (message: ThreadMessage) => void>();

  constructor(private readonly config: AppConfig) {}

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
      // An abort rejects at once and terminates the thread if the task is running.
      const outcome = (await this.threads().run(task, ctx.signal)) as ThreadOutcome;
      // The outcome comes on Piscina's own port, the messages on the thread's parentPort: the two
      // are not ordered, so wait for the call's last message, or its last progress could be lost.
      await lastMessage;
      if (outcome.ok) return outcome.output;
      const { message, ...options } = outcome.error;
      throw new ToolError(message, options);
    } finally {
      this.relays.delete(ctx.executionId);
    }
  }

  onModuleDestroy(): void {
    this.pool?.destroy();
  }

  private threads(): ToolHost {
    this.pool ??= new ToolHost(
      { workerFile: WORKER_FILE, threads: this.config.TOOL_THREADS, idleTimeoutMs: IDLE_THREAD_MS, threadHeapMb: 512 },
      {
        // What a thread posts on its parentPort arrives here, once per pool; a channel per call cost more than the call.
        message: (message) => this.relays.get((message as ThreadMessage).executionId)?.(message as ThreadMessage),
        threadFailed: (message) => this.logger.warn(`A tool thread failed between calls: ${message}`),
      },
    );
    return this.pool;
  }
}

const WORKER_FILE = path.join(__dirname, `tool-thread.worker${path.extname(__filename)}`);
