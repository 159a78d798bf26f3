import { GroupCommit } from './group-commit';

/** A write that records each batch it is given and answers when the test lets it. */
function recordingWrite(answer: (item: number) => number = (item) => item * 10) {
  const batches: number[][] = [];
  const release: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const write = async (items: number[]) => {
    batches.push(items);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    await new Promise<void>((resolve) => release.push(resolve));
    inFlight -= 1;
    return items.map(answer);
  };
  const releaseAll = async () => {
    while (release.length > 0) {
      release.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { write, batches, releaseAll, maxInFlight: () => maxInFlight };
}

describe('GroupCommit', () => {
  it('sends items of one event-loop turn in one write and answers each caller with its own result', async () => {
    const { write, batches, releaseAll } = recordingWrite();
    const commit = new GroupCommit(write, 100);
    const answers = Promise.all([1, 2, 3].map((item) => commit.submit(item)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1, 2, 3]]);
    await releaseAll();
    await expect(answers).resolves.toEqual([10, 20, 30]);
  });

  it('keeps one write in flight: what arrives meanwhile goes in the next, at most maxBatch at a time', async () => {
    const { write, batches, releaseAll, maxInFlight } = recordingWrite();
    const commit = new GroupCommit(write, 2);
    const first = commit.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4, 5, 6].map((item) => commit.submit(item));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    await releaseAll();
    expect(batches).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(maxInFlight()).toBe(1);
    await expect(Promise.all([first, ...later])).resolves.toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('a failing batch is retried item by item: only the bad item fails, nobody waits forever', async () => {
    const writes: number[][] = [];
    const commit = new GroupCommit(async (items: number[]) => {
      writes.push(items);
      if (items.includes(13)) throw new Error('13 cannot be stored');
      return items.map((item) => -item);
    }, 100);
    const outcomes = await Promise.allSettled([11, 12, 13, 14].map((item) => commit.submit(item)));
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: -11 },
      { status: 'fulfilled', value: -12 },
      { status: 'rejected', reason: new Error('13 cannot be stored') },
      { status: 'fulfilled', value: -14 },
    ]);
    expect(writes).toEqual([[11, 12, 13, 14], [11], [12], [13], [14]]);
  });

  it('when every write fails, every caller gets the error, and the queue keeps working after', async () => {
    let down = true;
    const commit = new GroupCommit(async (items: number[]) => {
      if (down) throw new Error('connection refused');
      return items;
    }, 100);
    const outcomes = await Promise.allSettled([1, 2, 3].map((item) => commit.submit(item)));
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as Error).message)).toEqual(['connection refused', 'connection refused', 'connection refused']);
    down = false;
    await expect(commit.submit(4)).resolves.toBe(4);
  });
});
