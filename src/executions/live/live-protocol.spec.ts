import { parseClientMessage, subscriptionName, targetOf } from './live-protocol';

describe('live protocol', () => {
  it('parses the four client messages', () => {
    expect(parseClientMessage('{"type":"auth","key":"sk_user_x"}')).toEqual({ ok: true, message: { type: 'auth', key: 'sk_user_x' } });
    expect(parseClientMessage('{"type":"subscribe","tool_id":"t","after":5}')).toEqual({ ok: true, message: { type: 'subscribe', tool_id: 't', after: 5 } });
    expect(parseClientMessage('{"type":"unsubscribe","all":true}')).toEqual({ ok: true, message: { type: 'unsubscribe', all: true } });
    expect(parseClientMessage('{"type":"ping"}')).toEqual({ ok: true, message: { type: 'ping' } });
  });

  it.each([
    ['not json', /not JSON/],
    ['[]', /./],
    ['{"type":"nope"}', /./],
    ['{"type":"subscribe","after":-1}', /after/],
    ['{"type":"subscribe","all":false}', /all/],
    ['{"type":"ping","extra":1}', /./],
    [`{"type":"subscribe","execution_id":"${'x'.repeat(201)}"}`, /execution_id/],
  ])('refuses %s with a reason', (text, reason) => {
    const parsed = parseClientMessage(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(reason);
  });

  it('a target is exactly one of execution_id, tool_id, all', () => {
    expect(targetOf({ execution_id: 'exec_1' })).toEqual({ execution_id: 'exec_1' });
    expect(targetOf({})).toBeNull();
    expect(targetOf({ tool_id: 't', all: true })).toBeNull();
    expect(subscriptionName({ execution_id: 'exec_1' })).toBe('execution:exec_1');
    expect(subscriptionName({ tool_id: 't' })).toBe('tool:t');
    expect(subscriptionName({ all: true })).toBe('all');
  });
});
