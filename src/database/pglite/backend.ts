/**
 * A PGlite database running in its own worker thread, spoken to in raw wire-protocol bytes.
 *
 * Why a worker: PGlite executes every query synchronously in WASM, so in-process it would stall
 * the HTTP server for the length of each query (and of its start-up, ~0.5-2.5 s); and it loads Node
 * built-ins with dynamic import(), which Jest's VM sandbox rejects unless Node runs with
 * --experimental-vm-modules. A worker thread is a plain Node context and leaves the event loop free.
 */
import { Worker } from 'node:worker_threads';

// Plain JavaScript: the worker runs outside the TypeScript toolchain (ts-jest, ts-node, tsc output).
// `execProtocol` (not `execProtocolRaw`) because it also clears PGlite's per-call message buffer.
// A fresh data directory: PGlite 0.3 runs its first session in template1 whatever 'database' says
// (it continues the initdb backend); only a reopen connects to the requested database.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglitePath);
const { dataDir, database } = workerData;

async function connect() {
  const db = new PGlite(dataDir, { database });
  await db.waitReady;
  const { rows } = await db.query('SELECT current_database() AS name');
  return { db, name: rows[0].name };
}

async function open() {
  let { db, name } = await connect();
  if (name !== database) {
    await db.close();
    ({ db, name } = await connect());
  }
  if (name !== database) throw new Error('PGlite serves database "' + name + '", not "' + database + '"');
  return db;
}

open().then((db) => {
  parentPort.postMessage('ready');
  parentPort.on('message', async (request) => {
    if (request === 'close') {
      await db.close();
      parentPort.postMessage('closed');
      return;
    }
    const { data } = await db.execProtocol(request, { throwOnError: false });
    parentPort.postMessage(data, [data.buffer]);
  });
});
`;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class PgliteBackend {
  private readonly worker: Worker;
  /** Answers arrive in request order: 'ready' first, then one per exchange, 'closed' last. */
  private readonly pending: Pending[] = [];
  private failure?: Error;
  private closing?: Promise<void>;

  private constructor(dataDir: string, database: string) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pglitePath: require.resolve('@electric-sql/pglite'), dataDir, database },
    });
    this.worker.on('message', (message: unknown) => {
      this.pending.shift()?.resolve(message);
      // Idle, the thread does not hold the process open (as pg's allowExitOnIdle): a database
      // nobody closed must not hang a CLI or a test run. It is referenced again while busy.
      if (this.pending.length === 0) this.worker.unref();
    });
    // Any exception in the worker (open, query, close) ends it: everything waiting gets the cause.
    this.worker.on('error', (error: Error) => this.fail(new Error(`PGlite (${dataDir}) failed: ${error.message}`)));
    this.worker.on('exit', (code) => this.fail(new Error(`PGlite (${dataDir}) stopped (worker exit code ${code})`)));
  }

  /** Starts PGlite on `dataDir` (creating the database there when it is empty). */
  static async open(dataDir: string, database: string): Promise<PgliteBackend> {
    const backend = new PgliteBackend(dataDir, database);
    await backend.request();
    return backend;
  }

  /** One protocol round trip: frontend messages in, every backend message they produced out. */
  async exchange(messages: Uint8Array): Promise<Uint8Array> {
    // A fresh copy: `messages` may view Node's shared Buffer pool, which must not be transferred.
    const copy = new Uint8Array(messages);
    return (await this.request(copy, [copy.buffer])) as Uint8Array;
  }

  /**
   * Shuts PGlite down cleanly (checkpoint, files closed), then ends the thread: terminate() rather
   * than waiting for the worker's event loop to drain, so no stray handle can keep it alive.
   * Idempotent; after a crash there is nothing left to close (the crash was reported to the queries).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (!this.failure) await this.request('close');
      } finally {
        await this.worker.terminate();
      }
    })();
    return this.closing;
  }

  private request(message?: Uint8Array | 'close', transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.worker.ref();
      if (message !== undefined) this.worker.postMessage(message, transfer);
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.splice(0)) waiter.reject(this.failure);
  }
}
