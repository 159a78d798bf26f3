import { canonicalJson } from '../common/canonical-json';
import { MemoryResultCache, resultCacheKey } from './result-cache';

describe('result cache keys', () => {
  it('ignore member order but not values, tool version or API key', () => {
    const base = resultCacheKey('key_a', 'tool', '1.0.0', { b: 1, a: { y: [1, 2], x: null } });
    expect(resultCacheKey('key_a', 'tool', '1.0.0', { a: { x: null, y: [1, 2] }, b: 1 })).toBe(base);
    expect(resultCacheKey('key_a', 'tool', '1.0.1', { b: 1, a: { y: [1, 2], x: null } })).not.toBe(base);
    expect(resultCacheKey('key_b', 'tool', '1.0.0', { b: 1, a: { y: [1, 2], x: null } })).not.toBe(base);
    expect(resultCacheKey('key_a', 'tool', '1.0.0', { b: 1, a: { y: [2, 1], x: null } })).not.toBe(base);
  });

  it('canonical JSON sorts keys at every depth', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: 'x', u: undefined })).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
  });
});

describe('MemoryResultCache', () => {
  it('expires entries and drops a scope without touching others', async () => {
    const cache = new MemoryResultCache();
    const now = Date.now();
    await cache.set('s1:a', 's1', { execution_id: 'e1', result: { v: 1 }, etag: '"1"', stored_at: now, expires_at: now + 60_000 });
    await cache.set('s1:b', 's1', { execution_id: 'e2', result: { v: 2 }, etag: '"2"', stored_at: now, expires_at: now + 60_000 });
    await cache.set('s2:a', 's2', { execution_id: 'e3', result: { v: 3 }, etag: '"3"', stored_at: now, expires_at: now + 60_000 });
    await cache.set('s2:old', 's2', { execution_id: 'e4', result: { v: 4 }, etag: '"4"', stored_at: now, expires_at: now - 1 });
    expect(await cache.get('s2:old')).toBeNull();
    expect(await cache.drop('s1')).toBe(2);
    expect(await cache.get('s1:a')).toBeNull();
    expect((await cache.get('s2:a'))?.execution_id).toBe('e3');
  });
});
