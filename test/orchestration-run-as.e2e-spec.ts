/**
 * The key a schedule or trigger runs as (docs/orchestration.md#the-key-it-runs-as), named in
 * `key_id`, on both engines: what lets a console session, whose credential ends, create and resume
 * them; who may name another key (keys:manage), and which keys can be named (the account's own,
 * active, holding orchestration:manage).
 */
import { randomBytes } from 'node:crypto';
import { ConsoleSessions } from '../src/sessions/console-sessions.service';
import { SESSION_COOKIE } from '../src/sessions/console-credentials';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

const SITE = 'console.test';
const TARGET = { tool: 'test-sleep', inputs: { ms: 1 } };
/** Once a day: no tick during the test. */
const CRON = '0 3 * * *';

describeEachEngine('orchestration: the key it runs as', (mode) => {
  // A trigger's secret is sealed: PostgreSQL needs SECRETS_KEY. No tick is due in the test; the loop idles.
  const suite = useTestApp(mode, { extensions: [TestToolsModule], env: { SECRETS_KEY: randomBytes(32).toString('base64'), ORCHESTRATION_POLL_MS: '0' } });

  /** A console session of the account: requests with its cookie and CSRF token. */
  async function sessionOf(account: TestAccount) {
    const link = await suite.t.app.get(ConsoleSessions).createLink(account.id, null);
    const signedIn = await suite.t.request({ method: 'POST', url: '/console/session', headers: { origin: `http://${SITE}`, host: SITE }, payload: { token: link.path.split('/').pop() } });
    expect(signedIn.statusCode).toBe(201);
    const cookie = `${SESSION_COOKIE}=${/tos_console=([^;]+)/.exec(String(signedIn.headers['set-cookie']))![1]}`;
    const csrf = signedIn.json().csrf_token as string;
    return (method: 'POST' | 'PATCH', url: string, payload: object) => suite.t.request({ method, url, payload, headers: { cookie, 'x-csrf-token': csrf } });
  }
  const keyIdOf = async (account: TestAccount, name: string) => ((await suite.t.request({ method: 'GET', url: '/v1/keys?limit=100', key: account.key })).json().keys as { id: string; name: string }[]).find((k) => k.name === name)!.id;

  it('lets a console session create a schedule and a trigger that run as a key it names (or one made for it), and resume a schedule so', async () => {
    const owner = await suite.t.createAccount('run-as-owner');
    const session = await sessionOf(owner);
    const serviceKey = await keyIdOf(owner, 'run-as-owner-svc');

    // Naming none: a key of its own (test/orchestration.e2e-spec.ts follows that one through).
    const without = await session('POST', '/v1/schedules', { target: TARGET, cron: CRON });
    expect(without.statusCode).toBe(201);
    expect(without.json().key_id).not.toBe(serviceKey);

    const schedule = await session('POST', '/v1/schedules', { target: TARGET, cron: CRON, key_id: serviceKey });
    expect(schedule.statusCode).toBe(201);
    expect(schedule.json()).toMatchObject({ key_id: serviceKey, paused: false, next_runs: expect.any(Array) });
    const id = schedule.json().id;
    expect((await session('PATCH', `/v1/schedules/${id}`, { paused: true })).json()).toMatchObject({ paused: true, next_runs: [] });
    const resumedOwn = await session('PATCH', `/v1/schedules/${id}`, { paused: false });
    expect(resumedOwn.json()).toMatchObject({ paused: false, key_id: expect.not.stringMatching(serviceKey) });
    expect((await session('PATCH', `/v1/schedules/${id}`, { paused: true })).statusCode).toBe(200);
    const resumed = await session('PATCH', `/v1/schedules/${id}`, { paused: false, key_id: serviceKey });
    expect(resumed.json()).toMatchObject({ paused: false, key_id: serviceKey });

    const trigger = await session('POST', '/v1/triggers', { target: TARGET, verification: { type: 'bearer' }, key_id: serviceKey });
    expect(trigger.statusCode).toBe(201);
    expect(trigger.json()).toMatchObject({ key_id: serviceKey, url: expect.stringMatching(/^\/v1\/triggers\/trg_\w+\/events$/), secret: expect.any(String) });
  });

  it('refuses a key of another account, one without orchestration:manage, a revoked one, and naming another key without keys:manage', async () => {
    const owner = await suite.t.createAccount('run-as-checks');
    const stranger = await suite.t.createAccount('run-as-stranger');
    const session = await sessionOf(owner);
    const refused = async (payload: object, parameterOrStatus: string | number) => {
      const res = await session('POST', '/v1/schedules', { target: TARGET, cron: CRON, ...payload });
      if (typeof parameterOrStatus === 'number') expect(res.statusCode).toBe(parameterOrStatus);
      else expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: parameterOrStatus } });
      return res.json().error.message as string;
    };
    expect(await refused({ key_id: await keyIdOf(stranger, 'run-as-stranger-svc') }, 'key_id')).toContain('not a key of this account');
    expect(await refused({ key_id: 'key_doesnotexist' }, 'key_id')).toContain('not a key of this account');

    const narrow = await suite.t.createKey(owner.id, { name: 'no-orchestration', type: 'service', scopes: ['tools:invoke'] });
    expect(narrow).toMatch(/^sk_/);
    expect(await refused({ key_id: await keyIdOf(owner, 'no-orchestration') }, 'key_id')).toContain('orchestration:manage');

    await suite.t.createKey(owner.id, { name: 'gone', type: 'service' });
    const gone = await keyIdOf(owner, 'gone');
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/keys/${gone}`, key: owner.key })).statusCode).toBe(200);
    expect(await refused({ key_id: gone }, 'key_id')).toContain('revoked');

    // A key that may not mint keys may not borrow one either; its own id is fine.
    const manager = await suite.t.createKey(owner.id, { name: 'orchestrator', type: 'service', scopes: ['tools:invoke', 'orchestration:manage'] });
    const borrowing = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: manager, payload: { target: TARGET, cron: CRON, key_id: await keyIdOf(owner, 'run-as-checks-svc') } });
    expect(borrowing.statusCode).toBe(403);
    expect(borrowing.json().error.message).toContain('keys:manage');
    const own = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: manager, payload: { target: TARGET, cron: CRON, key_id: await keyIdOf(owner, 'orchestrator') } });
    expect(own.statusCode).toBe(201);
  });
});
