import { MemoryReplayCache } from './replay-cache';

describe('MemoryReplayCache', () => {
  it('sees a key first once within its lifetime, again after it', async () => {
    const cache = new MemoryReplayCache();
    expect(await cache.firstSight('k', 1000, 0)).toBe(true);
    expect(await cache.firstSight('k', 1000, 999)).toBe(false);
    expect(await cache.firstSight('other', 1000, 999)).toBe(true);
    expect(await cache.firstSight('k', 1000, 1000)).toBe(true);
  });
});
