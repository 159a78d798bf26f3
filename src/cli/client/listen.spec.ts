import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { newWebhookSecret } from '../../webhooks/webhook-signing';
import { ClientError } from './api-client';
import { forwardId, listenSecret } from './listen';

describe('listenSecret', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-listen-'));
  const file = (name: string, text: string) => {
    const at = path.join(dir, name);
    writeFileSync(at, text);
    return at;
  };

  it('makes a new secret per session unless one is pinned', () => {
    const first = listenSecret(undefined, {});
    expect(first).toEqual({ secret: expect.stringMatching(/^whsec_/), pinned: false });
    expect(listenSecret(undefined, {}).secret).not.toBe(first.secret);
  });

  it('reads --secret-file (trimmed) before TOS_LISTEN_SECRET', () => {
    const pinned = newWebhookSecret();
    expect(listenSecret(file('secret', `${pinned}\n`), { TOS_LISTEN_SECRET: newWebhookSecret() })).toEqual({ secret: pinned, pinned: true });
    expect(listenSecret(undefined, { TOS_LISTEN_SECRET: pinned })).toEqual({ secret: pinned, pinned: true });
  });

  it('refuses what is not a whsec_ secret, and a file it cannot read, as usage errors', () => {
    for (const [secretFile, env] of [[file('bad', 'hunter2'), {}], [undefined, { TOS_LISTEN_SECRET: 'whsec_short' }], [path.join(dir, 'missing'), {}]] as const) {
      const thrown = (() => {
        try {
          listenSecret(secretFile, env);
        } catch (err) {
          return err;
        }
      })();
      expect(thrown).toBeInstanceOf(ClientError);
      expect(thrown).toMatchObject({ code: 'INVALID_INPUT', exitCode: 2 });
      expect((thrown as Error).message).not.toContain('hunter2');
    }
  });
});

describe('forwardId', () => {
  it('is the same for the same event replayed, different for another', () => {
    const event = { event: 'execution.completed', data: { execution_id: 'exec_1', status: 'success' } };
    expect(forwardId(event)).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(forwardId({ ...event, data: { ...event.data } })).toBe(forwardId(event));
    expect(forwardId({ ...event, event: 'execution.failed' })).not.toBe(forwardId(event));
    expect(forwardId({ ...event, data: { execution_id: 'exec_2', status: 'success' } })).not.toBe(forwardId(event));
  });
});
