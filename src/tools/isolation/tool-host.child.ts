/**
 * The isolated tools' process (see ToolHost): a Piscina pool whose tasks, progress and outcomes
 * travel over the IPC channel of its fork. It runs under Node's permission model with no file
 * writes and no child processes granted, so neither can any thread it starts.
 */
import { Piscina } from 'piscina';
import type { FromHost, ToHost, ToolHostOptions } from './tool-host';

const options = JSON.parse(process.argv[2]) as ToolHostOptions;
const say = (message: FromHost) => process.send!(message);

const pool = new Piscina({
  filename: options.workerFile,
  minThreads: 0,
  maxThreads: options.threads,
  idleTimeout: options.idleTimeoutMs,
  // A thread over its heap ends with ERR_WORKER_OUT_OF_MEMORY, its call with it; the process lives on.
  resourceLimits: { maxOldGenerationSizeMb: options.threadHeapMb },
  // The host's own flags, the permission model's and (under ts-node) the TypeScript hook: on Node
  // 20 a thread given any other execArgv runs outside the permission model (tested).
  execArgv: process.execArgv,
});
pool.on('message', (message: unknown) => say({ kind: 'message', message }));

const running = new Map<number, AbortController>();

process.on('message', (request: ToHost) => {
  if (request.kind === 'abort') {
    running.get(request.id)?.abort();
    return;
  }
  const { id } = request;
  const controller = new AbortController();
  running.set(id, controller);
  pool
    .run(request.task, { signal: controller.signal })
    .then(
      (outcome: unknown) => say({ kind: 'done', id, outcome }),
      (error: Error & { code?: string }) => say({ kind: 'failed', id, error: { name: error.name, message: error.message, code: error.code } }),
    )
    .finally(() => running.delete(id));
});
// The service is gone: so are the calls.
process.on('disconnect', () => process.exit(0));
