import { FairSlots } from './fair-slots';

const signal = () => new AbortController().signal;

/** Acquires for `account`, recording the order in which slots are granted. */
function taker(slots: FairSlots, granted: string[]) {
  return (account: string, label = account, abortSignal = signal()) =>
    slots.acquire(account, abortSignal).then((release) => {
      granted.push(label);
      return release;
    });
}

describe('FairSlots', () => {
  it('never lets one account hold more than its share, even with slots free', async () => {
    const granted: string[] = [];
    const take = taker(new FairSlots(4, 2), granted);
    await take('a', 'a1');
    await take('a', 'a2');
    const third = take('a', 'a3');
    const other = await take('b', 'b1');
    await Promise.resolve();
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    other();
    await Promise.resolve();
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    void third;
  });

  it('gives a freed slot to the waiting account served least recently, not to the first in line', async () => {
    const granted: string[] = [];
    const take = taker(new FairSlots(1, 1), granted);
    const a1 = await take('a', 'a1');
    const a2 = take('a', 'a2');
    const a3 = take('a', 'a3');
    const b1 = take('b', 'b1');
    const c1 = take('c', 'c1');
    a1();
    (await b1)();
    (await c1)();
    (await a2)();
    (await a3)();
    expect(granted).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
  });

  it('drops a waiter whose signal aborts, and the next one gets the slot', async () => {
    const granted: string[] = [];
    const take = taker(new FairSlots(1, 1), granted);
    const hog = await take('a', 'a1');
    const gone = new AbortController();
    const cancelled = take('b', 'b1', gone.signal);
    const next = take('c', 'c1');
    gone.abort(new Error('cancelled by its caller'));
    await expect(cancelled).rejects.toThrow('cancelled by its caller');
    hog();
    hog(); // a second release gives back nothing more
    await next;
    const after = take('d', 'd1');
    await Promise.resolve();
    expect(granted).toEqual(['a1', 'c1']);
    void after;
  });
});
