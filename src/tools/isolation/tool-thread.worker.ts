/**
 * Runs one isolated tool call inside a worker thread of the ToolThreads pool. The main thread
 * stops a call by terminating the thread, so the tool's own signal never fires here; progress and
 * log lines travel back over the thread's parentPort, tagged with the execution id.
 */
import { parentPort } from 'node:worker_threads';
import { EgressPool, type EgressSettings } from '../egress/egress';
import { createToolContext } from '../context/tool-context';
import { ToolError, type ToolHandler, type ToolLogger, type ToolSettingValue, type Workspace } from '../sdk';
import { createWorkspace } from '../workspace';
import { askThenExecute } from '../caller-questions';

export interface ThreadTask {
  file: string;
  exportName: string;
  input: Record<string, unknown>;
  executionId: string;
  config: Readonly<Record<string, ToolSettingValue | undefined>>;
  workspaceRoot: string;
  egress: EgressSettings;
  accountId: string | null;
  /** The calling account's values of the tool's declared secret settings. */
  accountSecrets: Record<string, string>;
}

/** Posted on the thread's parentPort, tagged with the execution it belongs to. */
export type ThreadMessage = { executionId: string } & (
  | { kind: 'progress'; percent: number; message?: string }
  | { kind: 'log'; level: keyof ToolLogger; message: string; meta?: Record<string, unknown> }
  /** The call's last message: everything it posted before has arrived. */
  | { kind: 'end' }
);

/** ToolError's members, which survive the structured clone its class would not. */
export type ThreadOutcome =
  | { ok: true; output: unknown }
  | { ok: false; error: { message: string; code: ToolError['code']; retryable: boolean; details?: Record<string, unknown>; suggestion?: string; retryAfter?: number } };

/** One instance per tool class per thread, as the main thread keeps one per process. */
const handlers = new Map<string, ToolHandler>();
/** The thread's dispatchers, shared by its calls; they end with the thread. */
const egresses = new EgressPool();
const workspaces = new Map<string, Workspace>();

export default async function runIsolated(task: ThreadTask): Promise<ThreadOutcome> {
  const { executionId } = task;
  const post = (message: ThreadMessage) => parentPort!.postMessage(message);
  const log = (level: keyof ToolLogger) => (message: string, meta?: Record<string, unknown>) => post({ executionId, kind: 'log', level, message, meta });
  const ctx = createToolContext({
    executionId: task.executionId,
    signal: new AbortController().signal,
    progress: (percent, message) => post({ executionId, kind: 'progress', percent, message }),
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    config: task.config,
    workspace: workspaceAt(task.workspaceRoot),
    egress: task.egress,
    accountId: task.accountId,
    accountSecrets: { find: async (_account, name) => (Object.hasOwn(task.accountSecrets, name) ? task.accountSecrets[name] : undefined) },
  }, egresses.for(task.egress));
  try {
    return { ok: true, output: await askThenExecute(handlerFor(task.file, task.exportName), task.input, ctx) };
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    const { message, code, retryable, details, suggestion, retryAfter } = error;
    return { ok: false, error: { message, code, retryable, details, suggestion, retryAfter } };
  } finally {
    post({ executionId, kind: 'end' });
  }
}

function handlerFor(file: string, exportName: string): ToolHandler {
  const key = `${file}#${exportName}`;
  let handler = handlers.get(key);
  if (!handler) {
    const toolClass = (require(file) as Record<string, new () => ToolHandler>)[exportName];
    handler = new toolClass();
    handlers.set(key, handler);
  }
  return handler;
}

function workspaceAt(root: string): Workspace {
  let workspace = workspaces.get(root);
  if (!workspace) workspaces.set(root, (workspace = createWorkspace(root)));
  return workspace;
}
