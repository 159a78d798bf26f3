/**
 * Schedules and triggers (docs/orchestration.md) on both engines. The ticker is driven by hand
 * (ORCHESTRATION_POLL_MS=0) at chosen instants, so "a minute later" and "after an hour down" need
 * no waiting: exactly one run per tick under concurrent claims (and, on PostgreSQL, from two
 * processes), catch_up after downtime, overlap skip, a revoked key pausing its schedule; inbound
 * events verified (GitHub, GitLab, Standard Webhooks, bearer), filtered, mapped and deduplicated;
 * an internal trigger on execution.failed; workflow targets (by name or id) started as runs. Everything stays on this process (inject) or 127.0.0.1.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { ScheduleTicker } from '../src/orchestration/schedule-ticker';
import { OrchestrationLoop } from '../src/orchestration/orchestration-loop';
import { ApiKeysService } from '../src/keys/api-keys.service';
import { startTestApp, useTestApp, type TestAccount, type TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

const METRICS_TOKEN = randomBytes(16).toString('hex');
const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), ORCHESTRATION_POLL_MS: '0', METRICS_TOKEN };
const MINUTE = 60_000;

const push = (ref: string) => ({ ref, repository: { full_name: 'acme/app' }, head_commit: { id: 'c0ffee', message: 'fix: a bug' } });
const githubHeaders = (secret: string, body: string, delivery: string, event = 'push') => ({
  'content-type': 'application/json',
  'x-github-event': event,
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describeEachEngine('orchestration', (mode) => {
  const suite = useTestApp(mode, { env: ENV, extensions: [TestToolsModule] });
  let accounts = 0;
  const account = (tier?: 'free' | 'pro' | 'enterprise') => suite.t.createAccount(`orch-${++accounts}`, tier);
  const db = () => suite.t.app.get(DataSource);
  const ticker = () => suite.t.app.get(ScheduleTicker);
  const loop = () => suite.t.app.get(OrchestrationLoop);

  const post = async (owner: TestAccount, url: string, payload: object, status = 201) => {
    const res = await suite.t.request({ method: 'POST', url, key: owner.key, payload });
    expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status });
    return res.json();
  };
  const get = async (owner: TestAccount, url: string) => {
    const res = await suite.t.request({ method: 'GET', url, key: owner.key });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const runsOf = (owner: TestAccount, scheduleId: string) => get(owner, `/v1/schedules/${scheduleId}/runs`);
  const executionsOf = async (column: 'schedule_id' | 'trigger_id', id: string) =>
    (await db().query(`SELECT id, status FROM executions WHERE ${column} = $1 ORDER BY id`, [id])) as Array<{ id: string; status: string }>;
  const nextRunAt = async (id: string) => ((await db().query(`SELECT next_run_at FROM schedules WHERE id = $1`, [id])) as [{ next_run_at: Date }])[0].next_run_at;

  describe('schedules', () => {
    it('creates with the next runs shown, lists, gets, pauses, resumes and deletes; another account sees none of it', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1 + 1', data: {} } }, cron: '30 2 * * *', timezone: 'Europe/Berlin' });
      expect(created).toMatchObject({ id: expect.stringMatching(/^sch_/), target: { tool: 'json-transform' }, overlap: 'skip', catch_up: 'none', paused: false, paused_reason: null });
      expect(created.next_runs).toHaveLength(5);
      expect(created.next_runs[0]).toBe(created.next_run_at);
      for (const at of created.next_runs) expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(new Date(at))).toMatch(/^0[23]:30$/);

      expect((await get(owner, '/v1/schedules')).schedules.map((s: { id: string }) => s.id)).toEqual([created.id]);
      expect(await get(owner, `/v1/schedules/${created.id}`)).toEqual(created);

      const paused = await suite.t.request({ method: 'PATCH', url: `/v1/schedules/${created.id}`, key: owner.key, payload: { paused: true } });
      expect(paused.json()).toMatchObject({ paused: true, next_run_at: null, next_runs: [] });
      const resumed = await suite.t.request({ method: 'PATCH', url: `/v1/schedules/${created.id}`, key: owner.key, payload: { paused: false } });
      expect(resumed.json()).toMatchObject({ paused: false, next_run_at: created.next_run_at });

      const narrowed = await suite.t.createKey(owner.id, { name: 'sleep-only', type: 'service', tool_ids: ['test-sleep'] });
      expect((await suite.t.request({ method: 'GET', url: `/v1/schedules/${created.id}`, key: narrowed })).statusCode).toBe(404);
      expect((await get({ id: owner.id, key: narrowed }, '/v1/schedules')).total).toBe(0);

      const stranger = await account();
      for (const url of [`/v1/schedules/${created.id}`, `/v1/schedules/${created.id}/runs`]) {
        expect((await suite.t.request({ method: 'GET', url, key: stranger.key })).statusCode).toBe(404);
      }
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/schedules/${created.id}`, key: stranger.key })).statusCode).toBe(404);
      expect((await get(stranger, '/v1/schedules')).total).toBe(0);

      expect((await suite.t.request({ method: 'DELETE', url: `/v1/schedules/${created.id}`, key: owner.key })).statusCode).toBe(204);
      expect((await suite.t.request({ method: 'GET', url: `/v1/schedules/${created.id}`, key: owner.key })).statusCode).toBe(404);
    });

    it.each([
      [{ cron: 'every minute' }, 'cron'],
      [{ cron: '* * * * *', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ cron: '* * * * *', target: { tool: 'no-such-tool' } }, 'target.tool'],
      [{ cron: '* * * * *', target: { tool: 'json-transform', workflow: 'w' } }, 'target'],
      [{ cron: '* * * * *', target: { workflow: 'nightly' } }, 'target.workflow'],
      [{ cron: '* * * * *', overlap: 'sometimes' }, undefined],
    ])('refuses %j with a 400 naming %s', async (fields, parameter) => {
      const res = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: suite.acme.key, payload: { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, ...fields } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('INVALID_REQUEST');
      if (parameter) expect(res.json().error.details).toMatchObject({ parameter });
      if (parameter === 'target.workflow') expect(res.json().error.message).toBe('Unknown workflow: nightly');
    });

    it("refuses inputs the tool would refuse, an interval under the tier's minimum, and a schedule over the tier's cap", async () => {
      const bad = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: suite.acme.key, payload: { target: { tool: 'json-transform', inputs: { data: {} } }, cron: '0 * * * *' } });
      expect(bad.statusCode).toBe(400);
      const free = await account('free');
      const often = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: free.key, payload: { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '*/5 * * * *' } });
      expect(often.statusCode).toBe(400);
      expect(often.json().error.details).toEqual({ parameter: 'cron', min_interval_seconds: 900, interval_seconds: 300 });
      const every15 = { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '*/15 * * * *' };
      for (let i = 0; i < 5; i++) await post(free, '/v1/schedules', every15);
      const sixth = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: free.key, payload: every15 });
      expect([sixth.statusCode, sixth.json().error]).toEqual([409, expect.objectContaining({ code: 'CONFLICT', details: { limit: 5 } })]);
    });

    it('runs each tick exactly once under concurrent claims and starts, as an execution with schedule_id', async () => {
      const owner = await account();
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push((await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: `${i}`, data: {} } }, cron: '* * * * *' })).id);
      const tick = await nextRunAt(ids[0]);
      const now = new Date(tick.getTime() + 1_000);
      const claimed = await Promise.all([ticker().claimDue(now), ticker().claimDue(now), ticker().claimDue(now)]);
      expect(claimed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(ids.length);
      await Promise.all([ticker().startPending(now), ticker().startPending(now)]);
      for (const id of ids) {
        const { runs } = await runsOf(owner, id);
        expect(runs).toEqual([expect.objectContaining({ tick_at: tick.toISOString(), status: 'started', reason: null, execution_id: expect.stringMatching(/^exec_/) })]);
        const executions = await executionsOf('schedule_id', id);
        expect(executions.map((e) => e.id)).toEqual([runs[0].execution_id]);
        const done = await until('the run to finish', async () => {
          const execution = await get(owner, `/v1/executions/${runs[0].execution_id}`);
          return execution.status === 'success' ? execution : undefined;
        });
        expect(done).toMatchObject({ schedule_id: id, tool_id: 'json-transform' });
        expect((await get(owner, `/v1/schedules/${id}`)).next_run_at).toBe(new Date(tick.getTime() + MINUTE).toISOString());
      }
    });

    it('runs a daily 02:30 Europe/Berlin schedule once on the spring-forward day, at 03:30 local, and at 02:30 again after', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '30 2 * * *', timezone: 'Europe/Berlin' });
      // As if created the day before: 27 March 2027 02:30 CET; Berlin springs forward on the 28th at 02:00.
      await db().query(`UPDATE schedules SET next_run_at = '2027-03-27T01:30:00Z' WHERE id = $1`, [created.id]);
      for (const tick of ['2027-03-27T01:30:00Z', '2027-03-28T01:30:00Z', '2027-03-29T00:30:00Z']) {
        expect((await nextRunAt(created.id)).toISOString()).toBe(new Date(tick).toISOString());
        await loop().pass(new Date(new Date(tick).getTime() + 200));
      }
      const { runs } = await runsOf(owner, created.id);
      expect(runs.map((r: { tick_at: string; status: string }) => [r.tick_at, r.status])).toEqual([
        ['2027-03-29T00:30:00.000Z', 'started'],
        ['2027-03-28T01:30:00.000Z', 'started'],
        ['2027-03-27T01:30:00.000Z', 'started'],
      ]);
      expect((await nextRunAt(created.id)).toISOString()).toBe('2027-03-30T00:30:00.000Z');
    });

    it('loses no claimed tick to a process that died, and starts none twice when taking one over', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '* * * * *' });
      const due = await nextRunAt(created.id);
      const now = new Date(due.getTime() + 100);
      // Claimed, then the process died holding the run's lease: nothing started.
      expect(await ticker().claimDue(now)).toBe(1);
      await db().query(`UPDATE schedule_runs SET locked_until = $2 WHERE schedule_id = $1`, [created.id, new Date(now.getTime() + 1_000).toISOString()]);
      await ticker().startPending(new Date(now.getTime() + 500));
      expect((await runsOf(owner, created.id)).runs[0].status).toBe('pending');
      // Its lease lapsed: another pass takes it over and starts it.
      await ticker().startPending(new Date(now.getTime() + 2_000));
      const [run] = (await runsOf(owner, created.id)).runs;
      expect(run).toMatchObject({ status: 'started', tick_at: due.toISOString() });
      // A process that started it but died before recording so: the execution is found, not started again.
      await db().query(`UPDATE schedule_runs SET status = 'pending', locked_until = NULL WHERE schedule_id = $1`, [created.id]);
      await ticker().startPending(new Date(now.getTime() + 3_000));
      expect((await runsOf(owner, created.id)).runs).toEqual([expect.objectContaining({ status: 'started', execution_id: run.execution_id })]);
      expect((await executionsOf('schedule_id', created.id)).map((e) => e.id)).toEqual([run.execution_id]);
    });

    it('passes over a tick that already has its run, and moves on', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '* * * * *' });
      const due = await nextRunAt(created.id);
      // As a process whose clock ran ahead would have left it: the tick claimed, then the schedule retimed back onto it.
      await db().query(
        `INSERT INTO schedule_runs (id, schedule_id, account_id, tick_at, status, reason, created_at, ended_at) VALUES ('srn_ahead', $1, $2, $3, 'missed', 'claimed ahead', now(), now())`,
        [created.id, owner.id, due.toISOString()],
      );
      await ticker().claimDue(new Date(due.getTime() + 100));
      expect((await nextRunAt(created.id)).toISOString()).toBe(new Date(due.getTime() + MINUTE).toISOString());
      expect((await runsOf(owner, created.id)).runs.map((r: { id: string }) => r.id)).toEqual(['srn_ahead']);
      await ticker().claimDue(new Date(due.getTime() + MINUTE + 100));
      expect((await runsOf(owner, created.id)).runs.map((r: { tick_at: string }) => r.tick_at)).toEqual([new Date(due.getTime() + MINUTE).toISOString(), due.toISOString()]);
    });

    it('after downtime, catch_up last runs the latest missed tick once and catch_up none records it as missed', async () => {
      const owner = await account();
      const target = { tool: 'json-transform', inputs: { expression: '1', data: {} } };
      const last = await post(owner, '/v1/schedules', { target, cron: '* * * * *', catch_up: 'last' });
      const none = await post(owner, '/v1/schedules', { target, cron: '* * * * *', catch_up: 'none' });
      const due = await nextRunAt(last.id);
      // Down for an hour and a half: 90 ticks passed.
      const now = new Date(due.getTime() + 90 * MINUTE + 20_000);
      await loop().pass(now);
      const latest = new Date(due.getTime() + 90 * MINUTE).toISOString();
      expect((await runsOf(owner, last.id)).runs).toEqual([expect.objectContaining({ tick_at: latest, status: 'started', reason: expect.stringContaining('Caught up (catch_up: last): 91 ticks') })]);
      expect((await runsOf(owner, none.id)).runs).toEqual([expect.objectContaining({ tick_at: latest, status: 'missed', execution_id: null, reason: expect.stringContaining('Not run (catch_up: none)') })]);
      expect(await executionsOf('schedule_id', none.id)).toEqual([]);
      expect(await executionsOf('schedule_id', last.id)).toHaveLength(1);
      for (const schedule of [last, none]) expect((await nextRunAt(schedule.id)).toISOString()).toBe(new Date(due.getTime() + 91 * MINUTE).toISOString());

      // Back up: the next tick is on time for both.
      await loop().pass(new Date(due.getTime() + 91 * MINUTE + 500));
      expect((await runsOf(owner, none.id)).runs[0]).toMatchObject({ status: 'started', reason: null });
    });

    it('purges ended runs past the account retention, keeping newer ones', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '* * * * *' });
      const due = await nextRunAt(created.id);
      await loop().pass(new Date(due.getTime() + 100));
      await loop().pass(new Date(due.getTime() + MINUTE + 100));
      const { runs } = await runsOf(owner, created.id);
      expect(runs).toHaveLength(2);
      await db().query(`UPDATE schedule_runs SET created_at = created_at - interval '400 days' WHERE id = $1`, [runs[1].id]);
      await loop().purgeExpired(new Date());
      expect((await runsOf(owner, created.id)).runs.map((r: { id: string }) => r.id)).toEqual([runs[0].id]);
    });

    it('overlap skip records a tick while the previous run is active as skipped', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'test-sleep', inputs: { ms: 4_000 } }, cron: '* * * * *', overlap: 'skip' });
      const due = await nextRunAt(created.id);
      await loop().pass(new Date(due.getTime() + 100));
      const [first] = (await runsOf(owner, created.id)).runs;
      expect(first.status).toBe('started');
      await loop().pass(new Date(due.getTime() + MINUTE + 100));
      const { runs } = await runsOf(owner, created.id);
      expect(runs[0]).toMatchObject({ status: 'skipped', execution_id: null, reason: `Skipped (overlap: skip): the previous run's execution ${first.execution_id} was still active` });
      expect(await executionsOf('schedule_id', created.id)).toHaveLength(1);
    });

    it('overlap queue starts a tick that came while the previous run was active once that run has ended', async () => {
      const owner = await account();
      const created = await post(owner, '/v1/schedules', { target: { tool: 'test-sleep', inputs: { ms: 1_500 } }, cron: '* * * * *', overlap: 'queue' });
      const due = await nextRunAt(created.id);
      await loop().pass(new Date(due.getTime() + 100));
      await loop().pass(new Date(due.getTime() + MINUTE + 100));
      const [second, first] = (await runsOf(owner, created.id)).runs;
      expect([first.status, second.status]).toEqual(['started', 'pending']);
      await until('the first run to end', async () => ((await get(owner, `/v1/executions/${first.execution_id}`)).status === 'success' ? true : undefined));
      await loop().pass(new Date(due.getTime() + MINUTE + 5_000));
      const after = (await runsOf(owner, created.id)).runs[0];
      expect(after).toMatchObject({ id: second.id, status: 'started', tick_at: new Date(due.getTime() + MINUTE).toISOString() });
      expect(await executionsOf('schedule_id', created.id)).toHaveLength(2);
    });

    it('refuses the run of a schedule whose key was revoked, and pauses it with the reason', async () => {
      const owner = await account();
      const keys = suite.t.app.get(ApiKeysService);
      const secret = await suite.t.createKey(owner.id, { name: 'nightly', type: 'service' });
      const created = await post({ id: owner.id, key: secret }, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '* * * * *' });
      await keys.revoke(owner.id, created.key_id);
      const due = await nextRunAt(created.id);
      await loop().pass(new Date(due.getTime() + 100));
      const { runs } = await runsOf(owner, created.id);
      expect(runs[0]).toMatchObject({ status: 'refused', reason: expect.stringContaining(`The key ${created.key_id} that created it was revoked`) });
      expect(await get(owner, `/v1/schedules/${created.id}`)).toMatchObject({ paused: true, paused_reason: expect.stringContaining('revoked'), next_run_at: null });
      expect(await executionsOf('schedule_id', created.id)).toEqual([]);
    });

    it('ticks by itself in a process of the worker role, every ORCHESTRATION_POLL_MS', async () => {
      const prepared = await mode.prepare();
      const ticking = await startTestApp({ env: { ...prepared.env, ...ENV, ORCHESTRATION_POLL_MS: '100' }, extensions: [TestToolsModule] });
      try {
        const owner = await ticking.createAccount('ticking');
        const res = await ticking.request({ method: 'POST', url: '/v1/schedules', key: owner.key, payload: { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '*/10 * * * * *' } });
        expect(res.statusCode).toBe(201);
        const run = await until('a tick run by the ticker', async () => {
          const { runs } = (await ticking.request({ method: 'GET', url: `/v1/schedules/${res.json().id}/runs`, key: owner.key })).json();
          return runs.find((r: { execution_status: string | null }) => r.execution_status === 'success');
        }, 15_000);
        expect(run).toMatchObject({ status: 'started', reason: null });
      } finally {
        await ticking.close();
        await prepared.cleanup();
      }
    });

    if (mode.name === 'distributed') {
      describe('two ticking processes', () => {
        let second: TestApp;
        beforeAll(async () => {
          second = await startTestApp({ env: suite.env, extensions: [TestToolsModule] });
        });
        afterAll(() => second?.close());

        it('never run one tick twice', async () => {
          const owner = await account();
          const ids: string[] = [];
          for (let i = 0; i < 12; i++) ids.push((await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: `${i}`, data: {} } }, cron: '* * * * *', overlap: 'allow' })).id);
          const tickers = [ticker(), second.app.get(ScheduleTicker)];
          const loops = [loop(), second.app.get(OrchestrationLoop)];
          const first = await nextRunAt(ids[0]);
          for (let minute = 0; minute < 3; minute++) {
            const now = new Date(first.getTime() + minute * MINUTE + 200);
            await Promise.all([...loops.map((l) => l.pass(now)), ...tickers.map((t) => t.claimDue(now).then(() => t.startPending(now)))]);
          }
          for (const id of ids) {
            const { runs } = await runsOf(owner, id);
            expect(runs.map((r: { tick_at: string; status: string }) => [r.tick_at, r.status])).toEqual(
              [2, 1, 0].map((minute) => [new Date(first.getTime() + minute * MINUTE).toISOString(), 'started']),
            );
            expect((await executionsOf('schedule_id', id)).map((e) => e.id).sort()).toEqual(runs.map((r: { execution_id: string }) => r.execution_id).sort());
          }
        });
      });
    }
  });

  describe('workflow targets', () => {
    const SLEEPY = {
      name: 'sleepy-sum',
      inputs: { a: { type: 'integer', required: true }, ms: { type: 'integer', default: 0 } },
      steps: [
        { id: 'nap', tool: 'test-sleep', inputs: { ms: '${{ inputs.ms }}' } },
        { id: 'sum', tool: 'json-transform', needs: ['nap'], inputs: { expression: 'a + 1', data: { a: '${{ inputs.a }}' } } },
      ],
      outputs: { total: '${{ steps.sum.result.result }}' },
    };
    const saveWorkflow = (owner: TestAccount, document: object = SLEEPY) => post(owner, '/v1/workflows', document);
    const stepsOf = async (runId: string) => (await db().query(`SELECT step_key, status FROM executions WHERE parent_execution_id = $1 ORDER BY step_key`, [runId])) as Array<{ step_key: string; status: string }>;
    const ended = (owner: TestAccount, id: string) =>
      until(`run ${id} ended`, async () => {
        const current = await get(owner, `/v1/executions/${id}`);
        return ['success', 'error', 'cancelled'].includes(current.status) ? current : undefined;
      });

    it('a schedule names a workflow by name, keeps its id, and each tick is a workflow run with schedule_id; overlap skip counts the run', async () => {
      const owner = await account();
      const workflow = await saveWorkflow(owner);
      const created = await post(owner, '/v1/schedules', { target: { workflow: 'sleepy-sum', inputs: { a: 41, ms: 3_000 } }, cron: '* * * * *', overlap: 'skip' });
      expect(created.target).toEqual({ workflow: workflow.id, inputs: { a: 41, ms: 3_000 } });
      const due = await nextRunAt(created.id);
      await loop().pass(new Date(due.getTime() + 100));
      const [first] = (await runsOf(owner, created.id)).runs;
      expect(first).toMatchObject({ status: 'started', execution_id: expect.stringMatching(/^exec_/) });
      expect(await get(owner, `/v1/executions/${first.execution_id}`)).toMatchObject({ kind: 'workflow', tool_id: 'workflow.sleepy-sum', schedule_id: created.id });

      await loop().pass(new Date(due.getTime() + MINUTE + 100));
      expect((await runsOf(owner, created.id)).runs[0]).toMatchObject({ status: 'skipped', execution_id: null, reason: `Skipped (overlap: skip): the previous run's execution ${first.execution_id} was still active` });

      expect(await ended(owner, first.execution_id)).toMatchObject({ status: 'success', result: { total: 42 } });
      expect(await stepsOf(first.execution_id)).toEqual([{ step_key: 'nap', status: 'success' }, { step_key: 'sum', status: 'success' }]);
      // The steps are the run's, not the schedule's: one execution carries its schedule_id.
      expect(await executionsOf('schedule_id', created.id)).toEqual([{ id: first.execution_id, status: 'success' }]);
    });

    it("refuses another account's workflow, inputs the workflow would refuse, and a key without tools:invoke", async () => {
      const owner = await account();
      const workflow = await saveWorkflow(owner);
      const stranger = await account();
      const refused = async (who: TestAccount, target: object) => {
        const res = await suite.t.request({ method: 'POST', url: '/v1/schedules', key: who.key, payload: { target, cron: '0 * * * *' } });
        return [res.statusCode, res.json().error?.details?.parameter ?? res.json().error?.code];
      };
      expect(await refused(stranger, { workflow: workflow.id, inputs: { a: 1 } })).toEqual([400, 'target.workflow']);
      expect(await refused(stranger, { workflow: 'sleepy-sum', inputs: { a: 1 } })).toEqual([400, 'target.workflow']);
      expect((await refused(owner, { workflow: workflow.id, inputs: { a: 'one' } }))[0]).toBe(400);
      const readOnly = await suite.t.createKey(owner.id, { name: 'no-invoke', type: 'service', scopes: ['orchestration:manage', 'tools:read'] });
      expect(await refused({ id: owner.id, key: readOnly }, { workflow: workflow.id, inputs: { a: 1 } })).toEqual([403, 'FORBIDDEN']);
      expect((await get(stranger, '/v1/schedules')).total).toBe(0);
    });

    it('a verified trigger starts a workflow run with its mapped inputs, as an execution with trigger_id; a run whose workflow was deleted fails and is logged', async () => {
      const owner = await account();
      const workflow = await saveWorkflow(owner);
      const trigger = await post(owner, '/v1/triggers', { target: { workflow: workflow.id, inputs: {} }, verification: { type: 'bearer' }, inputs: { a: 'payload.n' } });
      const bearer = { 'content-type': 'application/json', authorization: `Bearer ${trigger.secret}` };
      const accepted = await suite.t.request({ method: 'POST', url: `/v1/triggers/${trigger.id}/events`, payload: JSON.stringify({ n: 9 }), headers: bearer });
      expect([accepted.statusCode, accepted.json().accepted]).toEqual([202, true]);
      const run = await ended(owner, accepted.json().execution_id);
      expect(run).toMatchObject({ status: 'success', kind: 'workflow', trigger_id: trigger.id, result: { total: 10 } });
      expect((await stepsOf(run.id)).map((step) => step.status)).toEqual(['success', 'success']);

      const badInput = await suite.t.request({ method: 'POST', url: `/v1/triggers/${trigger.id}/events`, payload: JSON.stringify({ n: 'nine' }), headers: bearer });
      expect(badInput.json()).toMatchObject({ accepted: false, execution_id: null });
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/workflows/${workflow.id}`, key: owner.key })).statusCode).toBe(200);
      const gone = await suite.t.request({ method: 'POST', url: `/v1/triggers/${trigger.id}/events`, payload: JSON.stringify({ n: 1 }), headers: bearer });
      expect(gone.json()).toMatchObject({ accepted: false, execution_id: null, reason: expect.stringContaining('NOT_FOUND') });
      expect((await executionsOf('trigger_id', trigger.id)).map((e) => e.id)).toEqual([run.id]);
    });
  });

  describe('triggers', () => {
    const createGithub = async (owner: TestAccount) =>
      post(owner, '/v1/triggers', {
        target: { tool: 'json-transform', inputs: { expression: 'message' } },
        verification: { type: 'github' },
        filter: "headers.`x-github-event` = 'push' and payload.ref = 'refs/heads/main'",
        inputs: { data: 'payload.head_commit' },
      });
    const deliver = (triggerId: string, body: string, headers: Record<string, string>) => suite.t.request({ method: 'POST', url: `/v1/triggers/${triggerId}/events`, payload: body, headers });

    it('starts the target of a signed GitHub push, refuses unsigned and wrongly signed ones, filters, and deduplicates deliveries', async () => {
      const owner = await account();
      const trigger = await createGithub(owner);
      expect(trigger).toMatchObject({ id: expect.stringMatching(/^trg_/), url: `/v1/triggers/${trigger.id}/events`, verification: { type: 'github' }, secret: expect.stringMatching(/^[A-Za-z0-9]{40}$/) });
      expect(await get(owner, `/v1/triggers/${trigger.id}`)).toEqual({ ...trigger, secret: undefined });

      const body = JSON.stringify(push('refs/heads/main'));
      const accepted = await deliver(trigger.id, body, githubHeaders(trigger.secret, body, 'delivery-1'));
      expect(accepted.statusCode).toBe(202);
      expect(accepted.json()).toEqual({ accepted: true, event_id: expect.stringMatching(/^tev_/), execution_id: expect.stringMatching(/^exec_/) });
      const done = await until('the triggered run', async () => {
        const execution = await get(owner, `/v1/executions/${accepted.json().execution_id}`);
        return execution.status === 'success' ? execution : undefined;
      });
      expect(done).toMatchObject({ trigger_id: trigger.id, result: { result: 'fix: a bug' } });

      const wrong = await deliver(trigger.id, body, githubHeaders('not-the-secret-at-all', body, 'delivery-2'));
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('does not match') });
      const tampered = await deliver(trigger.id, body.replace('main', 'mainx'), githubHeaders(trigger.secret, body, 'delivery-3'));
      expect(tampered.statusCode).toBe(401);
      const unsigned = await deliver(trigger.id, body, { 'content-type': 'application/json', 'x-github-delivery': 'delivery-4' });
      expect(unsigned.statusCode).toBe(401);

      const huge = JSON.stringify({ ...push('refs/heads/main'), padding: 'x'.repeat(1024 * 1024) });
      expect((await deliver(trigger.id, huge, githubHeaders(trigger.secret, huge, 'delivery-big'))).statusCode).toBe(413);

      const again = await deliver(trigger.id, body, githubHeaders(trigger.secret, body, 'delivery-1'));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ accepted: false, duplicate: true, event_id: accepted.json().event_id, execution_id: accepted.json().execution_id });

      const dev = JSON.stringify(push('refs/heads/dev'));
      const filtered = await deliver(trigger.id, dev, githubHeaders(trigger.secret, dev, 'delivery-5'));
      expect(filtered.statusCode).toBe(202);
      expect(filtered.json()).toEqual({ accepted: false, event_id: expect.any(String), execution_id: null, reason: 'The filter answered false' });

      expect((await executionsOf('trigger_id', trigger.id)).map((e) => e.id)).toEqual([accepted.json().execution_id]);
      const log = await get(owner, `/v1/triggers/${trigger.id}/events`);
      expect(log.total).toBe(5);
      expect(log.events.map((e: { status: string; accepted: boolean }) => [e.status, e.accepted]).sort()).toEqual(
        [['filtered', false], ['refused', false], ['refused', false], ['refused', false], ['started', true]].sort(),
      );

      const stranger = await account();
      expect((await suite.t.request({ method: 'GET', url: `/v1/triggers/${trigger.id}/events`, key: stranger.key })).statusCode).toBe(404);
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/triggers/${trigger.id}`, key: stranger.key })).statusCode).toBe(404);
    });

    it('counts trigger events and schedule ticks in the metrics', async () => {
      const owner = await account();
      const trigger = await post(owner, '/v1/triggers', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, verification: { type: 'bearer' } });
      const body = '{}';
      await deliver(trigger.id, body, { 'content-type': 'application/json', authorization: `Bearer ${trigger.secret}` });
      await deliver(trigger.id, body, { 'content-type': 'application/json', authorization: 'Bearer wrong' });
      const schedule = await post(owner, '/v1/schedules', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, cron: '* * * * *' });
      await loop().pass(new Date((await nextRunAt(schedule.id)).getTime() + 2_000));

      const metrics = await suite.t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(metrics.statusCode).toBe(200);
      const sample = (name: string, ...labels: string[]) => {
        const line = metrics.body.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      expect(sample('tos_trigger_events_total', 'source="inbound"', 'status="started"')).toBeGreaterThanOrEqual(1);
      expect(sample('tos_trigger_events_total', 'source="inbound"', 'status="refused"')).toBeGreaterThanOrEqual(1);
      expect(sample('tos_schedule_tick_lag_seconds_count', 'outcome="run"')).toBeGreaterThanOrEqual(1);
      expect(sample('tos_schedule_tick_lag_seconds_bucket', 'outcome="run"', 'le="1"')).toBeLessThan(sample('tos_schedule_tick_lag_seconds_bucket', 'outcome="run"', 'le="5"')!);
      expect(sample('tos_schedule_runs_total', 'status="started"')).toBeGreaterThanOrEqual(1);
    });

    it('verifies GitLab tokens, Standard Webhooks signatures and bearer secrets', async () => {
      const owner = await account();
      const target = { tool: 'json-transform', inputs: { expression: '1', data: {} } };
      const body = JSON.stringify({ object_kind: 'push' });
      const json = { 'content-type': 'application/json' };

      const gitlab = await post(owner, '/v1/triggers', { target, verification: { type: 'gitlab', secret: 'a-gitlab-token-of-ours' } });
      expect(gitlab.secret).toBe('a-gitlab-token-of-ours');
      expect((await deliver(gitlab.id, body, { ...json, 'x-gitlab-token': 'a-gitlab-token-of-ours', 'x-gitlab-event-uuid': 'u1' })).statusCode).toBe(202);
      expect((await deliver(gitlab.id, body, { ...json, 'x-gitlab-token': 'a-gitlab-token-of-yours', 'x-gitlab-event-uuid': 'u2' })).statusCode).toBe(401);

      const standard = await post(owner, '/v1/triggers', { target, verification: { type: 'standard_webhooks' } });
      const signature = new Webhook(standard.secret).sign('msg_1', new Date(), body);
      const signed = { ...json, 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signature };
      expect((await deliver(standard.id, body, signed)).statusCode).toBe(202);
      expect((await deliver(standard.id, body, signed)).json()).toMatchObject({ duplicate: true });
      expect((await deliver(standard.id, body, { ...signed, 'webhook-id': 'msg_2' })).statusCode).toBe(401);

      const bearer = await post(owner, '/v1/triggers', { target, verification: { type: 'bearer' } });
      expect((await deliver(bearer.id, body, { ...json, authorization: `Bearer ${bearer.secret}` })).statusCode).toBe(202);
      expect((await deliver(bearer.id, body, { ...json, authorization: `Bearer ${bearer.secret}x` })).statusCode).toBe(401);
      expect((await deliver(bearer.id, body, json)).statusCode).toBe(401);

      expect((await deliver('trg_doesnotexist0000000', body, json)).statusCode).toBe(404);
    });

    it("refuses to start anything for a trigger whose key was revoked, and logs why", async () => {
      const owner = await account();
      const secret = await suite.t.createKey(owner.id, { name: 'ci-trigger', type: 'service' });
      const trigger = await post({ id: owner.id, key: secret }, '/v1/triggers', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, verification: { type: 'bearer' } });
      await suite.t.app.get(ApiKeysService).revoke(owner.id, trigger.key_id);
      const res = await deliver(trigger.id, '{}', { 'content-type': 'application/json', authorization: `Bearer ${trigger.secret}` });
      expect([res.statusCode, res.json()]).toEqual([202, { accepted: false, event_id: expect.any(String), execution_id: null, reason: expect.stringContaining(`The key ${trigger.key_id} that created it was revoked`) }]);
      expect((await get(owner, `/v1/triggers/${trigger.id}/events`)).events).toEqual([expect.objectContaining({ status: 'refused', accepted: false, execution_id: null })]);
      expect(await executionsOf('trigger_id', trigger.id)).toEqual([]);
    });

    it('refuses a trigger without exactly one of verification and source, a short secret and an expression that does not parse', async () => {
      const target = { tool: 'json-transform', inputs: { expression: '1', data: {} } };
      for (const [body, parameter] of [
        [{ target }, 'verification'],
        [{ target, verification: { type: 'bearer' }, source: { event: 'execution.failed' } }, 'verification'],
        [{ target, verification: { type: 'bearer', secret: 'short' } }, 'verification.secret'],
        [{ target, verification: { type: 'bearer' }, filter: 'payload.(' }, 'filter'],
        [{ target, verification: { type: 'bearer' }, inputs: { data: '$$$(' } }, 'inputs.data'],
        [{ target, source: { event: 'execution.started' } }, 'source.event'],
      ] as const) {
        const res = await suite.t.request({ method: 'POST', url: '/v1/triggers', key: suite.acme.key, payload: body });
        expect([res.statusCode, res.json().error?.details?.parameter]).toEqual([400, parameter]);
      }
    });

    it('an internal trigger on execution.failed starts its target with the failed execution as payload', async () => {
      const owner = await account();
      const trigger = await post(owner, '/v1/triggers', {
        target: { tool: 'json-transform', inputs: { expression: 'tool_id & ": " & result.message' } },
        source: { event: 'execution.failed', tool_ids: ['test-misbehave'] },
        inputs: { data: 'payload' },
      });
      expect(trigger).toMatchObject({ source: { event: 'execution.failed', tool_ids: ['test-misbehave'] }, url: null, verification: null });
      expect(trigger.secret).toBeUndefined();
      const failed = await suite.t.request({ method: 'POST', url: '/v1/tools/test-misbehave/invoke', key: owner.key, payload: { mode: 'tool-error' } });
      expect(failed.json().status).toBe('error');
      await suite.t.request({ method: 'POST', url: '/v1/tools/test-misbehave/invoke', key: owner.key, payload: { mode: 'ok' } });

      await loop().pass();
      const { events } = await get(owner, `/v1/triggers/${trigger.id}/events`);
      expect(events).toEqual([expect.objectContaining({ status: 'started', accepted: true, delivery_id: failed.json().execution_id })]);
      const done = await until('the triggered run', async () => {
        const execution = await get(owner, `/v1/executions/${events[0].execution_id}`);
        return execution.status === 'success' ? execution : undefined;
      });
      expect(done).toMatchObject({ trigger_id: trigger.id, result: { result: 'test-misbehave: Upstream answered 503' } });
      // The run it started succeeded; had it failed, it would start nothing (no loops).
      await loop().pass();
      expect((await get(owner, `/v1/triggers/${trigger.id}/events`)).total).toBe(1);
    });

    // Last: it spends this app's window of requests without a valid credential.
    it('counts unverified events against the client IP: past IP_RATE_LIMIT a minute they are 429 and logged no more', async () => {
      const owner = await account();
      const trigger = await post(owner, '/v1/triggers', { target: { tool: 'json-transform', inputs: { expression: '1', data: {} } }, verification: { type: 'bearer' } });
      const forged = () => deliver(trigger.id, '{}', { 'content-type': 'application/json', authorization: 'Bearer forged' });
      let answer = await forged();
      for (let i = 0; i < 200 && answer.statusCode === 401; i++) answer = await forged();
      expect(answer.statusCode).toBe(429);
      expect(answer.json().error.code).toBe('RATE_LIMITED');
      const logged = (await get(owner, `/v1/triggers/${trigger.id}/events`)).total;
      expect((await forged()).statusCode).toBe(429);
      expect((await get(owner, `/v1/triggers/${trigger.id}/events`)).total).toBe(logged);
    });
  });
});
