import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { deliveryIdOf, newTriggerSecret, verificationFailure } from './trigger-verification';

const body = Buffer.from('{"ref":"refs/heads/main"}');
const secret = 'a-shared-secret-of-twenty';

describe('verificationFailure', () => {
  it('accepts a GitHub X-Hub-Signature-256 over the raw body, and nothing else', () => {
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(verificationFailure('github', secret, { 'x-hub-signature-256': signature }, body)).toBeNull();
    expect(verificationFailure('github', secret, { 'x-hub-signature-256': signature }, Buffer.from('{"ref": "refs/heads/main"}'))).toMatch(/does not match/);
    expect(verificationFailure('github', `${secret}x`, { 'x-hub-signature-256': signature }, body)).toMatch(/does not match/);
    expect(verificationFailure('github', secret, { 'x-hub-signature-256': signature.toUpperCase() }, body)).toMatch(/does not match/);
    expect(verificationFailure('github', secret, {}, body)).toBe('The X-Hub-Signature-256 header is missing');
  });

  it('accepts the GitLab token itself', () => {
    expect(verificationFailure('gitlab', secret, { 'x-gitlab-token': secret }, body)).toBeNull();
    expect(verificationFailure('gitlab', secret, { 'x-gitlab-token': secret.slice(0, -1) }, body)).toMatch(/does not match/);
    expect(verificationFailure('gitlab', secret, { 'x-gitlab-token': [secret, 'other'] }, body)).toBeNull();
    expect(verificationFailure('gitlab', secret, {}, body)).toMatch(/missing/);
  });

  it('accepts Standard Webhooks signatures made by the official library, within its timestamp tolerance', () => {
    const whsec = newTriggerSecret('standard_webhooks');
    const now = new Date();
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(whsec).sign('msg_1', now, body) };
    expect(verificationFailure('standard_webhooks', whsec, headers, body)).toBeNull();
    expect(verificationFailure('standard_webhooks', whsec, { ...headers, 'webhook-id': 'msg_2' }, body)).toMatch(/^Standard Webhooks verification failed/);
    const old = new Date(now.getTime() - 10 * 60_000);
    const stale = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(old.getTime() / 1000)), 'webhook-signature': new Webhook(whsec).sign('msg_1', old, body) };
    expect(verificationFailure('standard_webhooks', whsec, stale, body)).toMatch(/timestamp/i);
    expect(verificationFailure('standard_webhooks', whsec, {}, body)).toMatch(/^Standard Webhooks verification failed/);
  });

  it('accepts a bearer secret in Authorization, case-insensitive scheme', () => {
    expect(verificationFailure('bearer', secret, { authorization: `Bearer ${secret}` }, body)).toBeNull();
    expect(verificationFailure('bearer', secret, { authorization: `bearer ${secret}` }, body)).toBeNull();
    expect(verificationFailure('bearer', secret, { authorization: `Basic ${secret}` }, body)).toMatch(/missing/);
    expect(verificationFailure('bearer', secret, { authorization: 'Bearer wrong' }, body)).toMatch(/does not match/);
  });
});

describe('deliveryIdOf', () => {
  it.each([
    [{ 'x-github-delivery': 'g1' }, 'g1'],
    [{ 'x-gitlab-event-uuid': 'l1' }, 'l1'],
    [{ 'webhook-id': 'msg_1' }, 'msg_1'],
    [{ 'idempotency-key': 'k1' }, 'k1'],
    [{}, null],
  ])('reads %j as %s', (headers, id) => {
    expect(deliveryIdOf(headers)).toBe(id);
  });
});

describe('newTriggerSecret', () => {
  it('makes Standard Webhooks secrets in their whsec_ form and 40 base62 characters otherwise', () => {
    expect(newTriggerSecret('standard_webhooks')).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(newTriggerSecret('github')).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(newTriggerSecret('github')).not.toBe(newTriggerSecret('github'));
  });
});
