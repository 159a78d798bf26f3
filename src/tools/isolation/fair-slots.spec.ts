import { FairSlots } from './fair-slots';

/** Acquires for `account`, recording in `granted` the order in which slots are handed out. */
function taker(slots: FairSlots, granted: string[]) {
  return (account: string, label: string, signal = new AbortController().signal) =>
    slots.acquire(account, signal).then((release) => {
      granted.push(label);
      return release;
    });
}

/** Lets every settled grant run its continuation. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairSlots', () => {
  it('never lets one account hold more than its share, even with slots free', async () => {
    const granted: string[] = [];
    const take = taker(new FairSlots(4, 2), granted);
    await take('a', 'a1');
    await take('a', 'a2');
    void take('a', 'a3');
    const b1 = await take('b', 'b1');
    b1();
    await settle();
    expect(granted).toEqual(['a1', 'a2', 'b1']);
  });

  it('gives a freed slot to the waiting account served least recently, not to the first in line', async () => {
    const granted: string[] = [];
    const take = taker(new FairSlots(1, 1), granted);
    const a1 = await take('a', 'a1');
    const waiting = [take('a', 'a2'), take('a', 'a3'), take('b', 'b1'), take('c', 'c1')];
    a1();
    for (let served = 0; served < waiting.length; served++) {
      await settle();
      // Exactly one waiter holds the slot at a time: give it back for the next.
      const holder = granted[granted.length - 1];
      (await waiting[['a2', 'a3', 'b1', 'c1'].indexOf(holder)])();
    }
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
    void take('d', 'd1');
    await settle();
    expect(granted).toEqual(['a1', 'c1']);
  });
});
