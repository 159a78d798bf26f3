import type { Client } from '@modelcontextprotocol/client';
import { UpstreamSessions } from './upstream-sessions';

/** A stand-in client: counts its closes. */
function fakeClient(): Client & { closed: number } {
  const client = { closed: 0, onerror: undefined as ((err: Error) => void) | undefined, close: async () => void client.closed++ };
  return client as unknown as Client & { closed: number };
}

describe('UpstreamSessions', () => {
  const opened: ReturnType<typeof fakeClient>[] = [];
  const open = async () => {
    const client = fakeClient();
    opened.push(client);
    return client;
  };
  beforeEach(() => (opened.length = 0));

  it('keeps a session after a call and hands it to the next call of the same key only', async () => {
    const sessions = new UpstreamSessions({ maxIdlePerKey: 4, maxKeys: 10, idleMs: 60_000 });
    const first = await sessions.run('a', open, async (client) => client);
    expect(await sessions.run('a', open, async (client) => client)).toBe(first);
    expect(await sessions.run('b', open, async (client) => client)).not.toBe(first);
    expect(opened).toHaveLength(2);
    sessions.closeAll();
    expect(opened.map((client) => client.closed)).toEqual([1, 1]);
  });

  it('closes a session whose call failed, and opens a new one for a session the upstream forgot', async () => {
    const sessions = new UpstreamSessions({ maxIdlePerKey: 4, maxKeys: 10, idleMs: 60_000 });
    await expect(sessions.run('a', open, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(opened[0].closed).toBe(1);
    expect(sessions.idleCount()).toBe(0);

    await sessions.run('a', open, async () => 'ok');
    const forgotten = Object.assign(new Error('Error POSTing to endpoint: Session not found'), { data: { status: 404 } });
    let calls = 0;
    const answer = await sessions.run('a', open, async (client) => {
      if (++calls === 1) throw forgotten;
      return client;
    });
    expect(calls).toBe(2);
    expect(answer).toBe(opened[2]);
    expect(opened[1].closed).toBe(1);
    // A new session failing the same way is not tried a third time.
    await expect(sessions.run('b', open, async () => Promise.reject(forgotten))).rejects.toBe(forgotten);
    sessions.closeAll();
  });

  it('bounds what it keeps: per key, pairs of keys, idle time, and a session that errs while idle', async () => {
    jest.useFakeTimers();
    try {
      const sessions = new UpstreamSessions({ maxIdlePerKey: 2, maxKeys: 2, idleMs: 1_000 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const calls = [1, 2, 3].map(() => sessions.run('a', open, () => held));
      release();
      await Promise.all(calls);
      expect(sessions.idleCount()).toBe(2);
      expect(opened.filter((client) => client.closed)).toHaveLength(1);

      await sessions.run('b', open, async () => undefined);
      await sessions.run('c', open, async () => undefined); // 'a', the least recently used pair, goes
      expect(sessions.idleCount()).toBe(2);
      expect(opened.slice(0, 3).every((client) => client.closed === 1)).toBe(true);

      opened[3].onerror!(new Error('SSE stream disconnected'));
      expect(opened[3].closed).toBe(1);
      expect(sessions.idleCount()).toBe(1);
      jest.advanceTimersByTime(1_001);
      expect(sessions.idleCount()).toBe(0);
      expect(opened[4].closed).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });
});
