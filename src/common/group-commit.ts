interface Waiter<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: callers submit one item each; items that arrive while a write is in flight are
 * sent together in the next write (at most `maxBatch` at a time), so N concurrent callers cost one
 * round trip and one commit instead of N. An idle queue writes at the next `setImmediate`, which
 * gathers what arrived in the same event-loop turn without adding a timer's delay; under load
 * the batches grow with the time a write takes.
 *
 * `write` answers one result per item, in order, or throws. A write that fails is retried item by
 * item, so one bad item (a constraint, an unstorable value) fails only its own caller, and an
 * outage fails every caller with its own error; nobody is left waiting.
 */
export class GroupCommit<T, R> {
  private pending: Waiter<T, R>[] = [];
  private writing = false;
  private scheduled = false;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.writing || this.scheduled) return; // the write in flight takes this item next
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.drain();
      });
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) await this.settle(this.pending.splice(0, this.maxBatch));
    this.writing = false;
  }

  private async settle(batch: Waiter<T, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.write(batch.map((waiter) => waiter.item));
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error);
      for (const waiter of batch) await this.settle([waiter]);
      return;
    }
    batch.forEach((waiter, i) => waiter.resolve(results[i]));
  }
}
