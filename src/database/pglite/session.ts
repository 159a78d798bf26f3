/**
 * The one PGlite session of a data directory, lent to one holder at a time.
 *
 * PGlite is a single Postgres backend: every caller shares its session, so without leases a
 * transaction of one request would swallow the statements of another (and its ROLLBACK would undo
 * them). A lease is the equivalent of a checked-out pool connection; leases are granted in FIFO
 * order, and a session that its holder left inside a transaction is rolled back before the next
 * holder gets it.
 */
import { mkdir } from 'node:fs/promises';
import { PgliteBackend } from './backend';
import { decodeResponse, encodeQuery, type QueryResult, type TransactionStatus } from './protocol';

/** PGlite initialises a `postgres` database; this is the only one a session serves. */
export const SESSION_DATABASE = 'postgres';

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export class ExclusiveSession {
  private opened?: Promise<PgliteBackend>;
  private held = false;
  private readonly waiters: Waiter[] = [];
  /** Settles when every query issued so far has run: queries run one after another, in issue order. */
  private issued: Promise<unknown> = Promise.resolve();
  private status: TransactionStatus = 'I';
  private closing?: Promise<void>;

  constructor(private readonly dataDir: string) {}

  /** Waits for this caller's turn (FIFO), opening PGlite on first use. */
  async acquire(): Promise<Lease> {
    await this.turn();
    try {
      await this.open();
    } catch (error) {
      this.handOver();
      throw error;
    }
    return new Lease(this);
  }

  /**
   * Idempotent. Like a PostgreSQL fast shutdown: refuses queued and later callers and queries, lets
   * the queries already issued finish, then closes PGlite (an open transaction is lost). It does not
   * wait for the holder to release, so a leaked client cannot hang shutdown.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const waiter of this.waiters.splice(0)) waiter.reject(this.closedError());
      await this.issued;
      const backend = await this.opened?.catch(() => undefined);
      await backend?.close();
    })();
    return this.closing;
  }

  /** Queues one query on the session; only the current lease calls this. */
  execute(text: string, values?: readonly unknown[]): Promise<QueryResult | QueryResult[]> {
    if (this.closing) return Promise.reject(this.closedError());
    const run = this.issued.then(() => this.exchange(text, values));
    this.issued = run.catch(() => undefined);
    return run;
  }

  /**
   * Ends a lease once the holder's queries have run: rolls back a transaction it left open (the
   * server's own transaction status says so, whether it came from BEGIN, START TRANSACTION or an
   * aborting error). The next caller gets its turn even when this cleanup fails; the failure is then rethrown.
   */
  async release(): Promise<void> {
    try {
      await this.issued;
      if (this.status !== 'I' && !this.closing) await this.execute('ROLLBACK');
    } finally {
      this.handOver();
    }
  }

  private async exchange(text: string, values?: readonly unknown[]): Promise<QueryResult | QueryResult[]> {
    const backend = await this.open();
    let exchange;
    try {
      exchange = decodeResponse(await backend.exchange(encodeQuery(text, values)));
    } catch (error) {
      this.status = 'E'; // the session state is unknown: roll back before the next holder
      throw error;
    }
    this.status = exchange.status;
    if (exchange.error) throw exchange.error;
    return exchange.result;
  }

  private turn(): Promise<void> {
    if (this.closing) return Promise.reject(this.closedError());
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private handOver(): void {
    const next = this.waiters.shift();
    if (next) next.resolve();
    else this.held = false;
  }

  private open(): Promise<PgliteBackend> {
    this.opened ??= mkdir(this.dataDir, { recursive: true }).then(() => PgliteBackend.open(this.dataDir, SESSION_DATABASE));
    return this.opened;
  }

  private closedError(): Error {
    return new Error(`The PGlite database in ${this.dataDir} is closed (the pool was ended)`);
  }
}

/** One holder's exclusive use of the session, until release. */
export class Lease {
  private released = false;

  constructor(private readonly session: ExclusiveSession) {}

  query(text: string, values?: readonly unknown[]): Promise<QueryResult | QueryResult[]> {
    if (this.released) return Promise.reject(new Error('Query on a PGlite client that was already released'));
    return this.session.execute(text, values);
  }

  /** Queries issued before the release still run; the session is then handed on. */
  release(): Promise<void> {
    if (this.released) throw new Error('Release called on client which has already been released to the pool.');
    this.released = true;
    return this.session.release();
  }
}
