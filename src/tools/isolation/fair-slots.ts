/** A call waiting for a thread: its account and how to hand it the thread. */
interface Waiter {
  account: string;
  grant: (release: () => void) => void;
}

/**
 * The threads of the isolated pool as slots, handed out fairly: an account holds at most
 * `perAccount` of the `total` at once, even when the others are idle (so another account's call
 * always finds a thread that no hostile account can take), and a freed slot goes to the waiting
 * account served least recently (round-robin across accounts, first come first served within one).
 * Piscina gets a call only once it holds a slot, so Piscina itself never queues.
 */
export class FairSlots {
  private busy = 0;
  private turn = 0;
  /** Slots held per account; an account holding none and waiting for none is absent. */
  private readonly held = new Map<string, number>();
  /** When each account present in `held` or `waiting` was last given a slot (0: never). */
  private readonly lastTurn = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(
    private readonly total: number,
    private readonly perAccount: number,
  ) {}

  /**
   * Resolves with the function that gives the slot back once the account may hold one more; rejects
   * with the signal's reason if it aborts first (the call then never reaches a thread).
   */
  acquire(account: string, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.dequeue(waiter);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        account,
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.waiting.get(account) ?? [];
      queue.push(waiter);
      this.waiting.set(account, queue);
      if (!this.lastTurn.has(account)) this.lastTurn.set(account, 0);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.busy < this.total) {
      const account = this.nextAccount();
      if (account === undefined) return;
      const queue = this.waiting.get(account)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(account);
      this.busy += 1;
      this.held.set(account, (this.held.get(account) ?? 0) + 1);
      this.lastTurn.set(account, ++this.turn);
      waiter.grant(this.releaser(account));
    }
  }

  /** The waiting account under its share that was served least recently. */
  private nextAccount(): string | undefined {
    let chosen: string | undefined;
    for (const account of this.waiting.keys()) {
      if ((this.held.get(account) ?? 0) >= this.perAccount) continue;
      if (chosen === undefined || this.lastTurn.get(account)! < this.lastTurn.get(chosen)!) chosen = account;
    }
    return chosen;
  }

  /** Gives the slot back once, however often it is called. */
  private releaser(account: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
      const left = this.held.get(account)! - 1;
      if (left > 0) this.held.set(account, left);
      else this.held.delete(account);
      this.forgetIfIdle(account);
      this.dispatch();
    };
  }

  private dequeue(waiter: Waiter): void {
    const queue = this.waiting.get(waiter.account);
    const index = queue?.indexOf(waiter) ?? -1;
    if (index < 0) return;
    queue!.splice(index, 1);
    if (queue!.length === 0) this.waiting.delete(waiter.account);
    this.forgetIfIdle(waiter.account);
  }

  private forgetIfIdle(account: string): void {
    if (!this.held.has(account) && !this.waiting.has(account)) this.lastTurn.delete(account);
  }
}
