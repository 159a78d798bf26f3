import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signDelivery } from './webhook-signing';

const payload = { event: 'execution.completed', timestamp: '2026-11-26T12:00:00.000Z', data: { execution_id: 'exec_1', tool_id: 't', status: 'success', result: { é: 'ü' } } };

describe('signDelivery', () => {
  const now = new Date();
  const secret = newWebhookSecret();

  it('is verified by the official standardwebhooks library, and only under its own secret', () => {
    const { body, headers } = signDelivery('msg_1', payload, [secret], now);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ ...payload, signature: headers['x-signature'] });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('exec_1', 'exec_2'), headers)).toThrow();
  });

  it('X-Signature is the hex HMAC of "<X-Timestamp>.<body without its signature member>" (docs/API.md#webhooks)', () => {
    const { body, headers } = signDelivery('msg_1', payload, [secret], now);
    expect(headers['x-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    const suffix = `,"signature":"${headers['x-signature']}"}`;
    expect(body.endsWith(suffix)).toBe(true);
    const unsigned = body.slice(0, -suffix.length) + '}';
    expect(unsigned).toBe(JSON.stringify(payload));
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(headers['x-signature']).toBe(`sha256=${createHmac('sha256', key).update(`${headers['x-timestamp']}.${unsigned}`).digest('hex')}`);
  });

  it('signs with every secret given, newest first, in both headers', () => {
    const older = newWebhookSecret();
    const { body, headers } = signDelivery('msg_1', payload, [secret, older], now);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['x-signature'].split(' ')).toEqual([signDelivery('msg_1', payload, [secret], now).headers['x-signature'], signDelivery('msg_1', payload, [older], now).headers['x-signature']]);
    expect(() => new Webhook(older).verify(body, headers)).not.toThrow();
    expect(JSON.parse(body).signature).toBe(headers['x-signature'].split(' ')[0]);
  });
});
