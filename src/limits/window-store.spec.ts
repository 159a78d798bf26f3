import { MemoryWindowStore } from './window-store';

describe('MemoryWindowStore', () => {
  it('lets exactly `limit` requests through in any window, a slot freeing as the oldest leaves', async () => {
    const store = new MemoryWindowStore();
    const hit = (t: number) => store.hit('k', 3, 1000, t);
    expect((await hit(0)).allowed).toBe(true);
    expect((await hit(100)).allowed).toBe(true);
    expect(await hit(200)).toEqual({ allowed: true, count: 3, resetAt: 1000 });
    expect(await hit(300)).toEqual({ allowed: false, count: 3, resetAt: 1000 });
    expect((await hit(999)).allowed).toBe(false);
    expect((await hit(1000)).allowed).toBe(true); // t=0 left the window
    expect((await hit(1050)).allowed).toBe(false);
    expect((await hit(1100)).allowed).toBe(true); // t=100 left
    // Refused requests were not counted: the window holds 200, 1000, 1100.
    expect(await store.peek('k', 3, 1000, 1150)).toEqual({ allowed: true, count: 3, resetAt: 1200 });
  });

  it('keeps keys apart and forgets idle ones', async () => {
    const store = new MemoryWindowStore();
    await store.hit('a', 1, 1000, 0);
    expect((await store.hit('b', 1, 1000, 0)).allowed).toBe(true);
    expect((await store.hit('a', 1, 1000, 10)).allowed).toBe(false);
    expect(await store.peek('a', 1, 1000, 5000)).toEqual({ allowed: true, count: 0, resetAt: 6000 });
  });

  it('stays exact for a busy key whose window holds thousands of requests, through many compactions', async () => {
    const store = new MemoryWindowStore();
    for (let t = 0; t < 5_000; t++) {
      for (let i = 0; i < 3; i++) await store.hit('busy', 1e9, 1000, t);
      // Three requests per millisecond; those of t - 1000 and earlier have left.
      expect(await store.peek('busy', 1e9, 1000, t)).toEqual({ allowed: true, count: 3 * Math.min(t + 1, 1000), resetAt: Math.max(0, t - 999) + 1000 });
    }
    // At 5000 the requests of 4001..4999 remain: full for a limit of 2997, the oldest leaving at 5001.
    expect(await store.hit('busy', 2997, 1000, 5_000)).toEqual({ allowed: false, count: 2997, resetAt: 5001 });
  });

  it('counts as many of several requests as the window holds, and none of the rest', async () => {
    const store = new MemoryWindowStore();
    await store.hit('k', 5, 1000, 0);
    expect(await store.hitMany('k', 5, 1000, 6, 10)).toEqual({ taken: 4, count: 5, resetAt: 1000 });
    expect(await store.hitMany('k', 5, 1000, 2, 20)).toEqual({ taken: 0, count: 5, resetAt: 1000 });
    expect(await store.hitMany('k', 5, 1000, 3, 1000)).toEqual({ taken: 1, count: 5, resetAt: 1010 }); // t=0 left; the oldest is now t=10
  });
});
