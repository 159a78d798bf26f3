/**
 * Execution writes under concurrency, on PGlite and on PostgreSQL: the group-committed inserts and
 * terminal updates of ExecutionsStore, and sync executions that are written once when they finish
 * within RUNNING_ROW_DELAY_MS and as `running` first when they do not.
 */
import { DataSource, EntityNotFoundError } from 'typeorm';
import type { Principal } from '../src/identity/principal';
import { newExecutionId } from '../src/common/ids';
import { Execution } from '../src/executions/engine/execution.entity';
import { ExecutionRunner, RUNNING_ROW_DELAY_MS, terminal } from '../src/executions/engine/execution-runner';
import { ExecutionsStore } from '../src/executions/engine/executions.store';
import { ToolRegistry } from '../src/tools/tool-registry';
import { TestAccount, useTestApp } from './support/app';
import { describeEachDatabase } from './support/databases';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

describeEachDatabase('execution writes', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule] });
  const store = () => suite.t.app.get(ExecutionsStore);
  const rows = () => suite.t.app.get(DataSource).getRepository(Execution);

  // Every column the entity has, null unless given: a column added later is compared too, never left undefined.
  const unset = () => Object.fromEntries(rows().metadata.columns.map((column) => [column.propertyName, null]));
  const newRow = (fields: Partial<Execution> = {}): Execution =>
    Object.assign(new Execution(), unset(), {
      id: newExecutionId(Date.now()),
      account_id: suite.acme.id,
      key_id: 'key_writes',
      tool_id: 'json-transform',
      tool_version: '1.0.0',
      status: 'running',
      mode: 'sync',
      progress: 0,
      progress_message: null,
      input: { expression: '$', data: { nested: [1, 'two', { three: null }], text: 'ünïcødé ✓' } },
      result: null,
      error: null,
      request_id: null,
      created_at: new Date(Date.now() - 1234),
      started_at: new Date(Date.now() - 1000),
      completed_at: null,
      duration_ms: null,
      timeout_seconds: 30,
      input_requests: null,
      input_responses: null,
      waiting_since: null,
      sealed_inputs: null,
      claimed_by: null,
      unaskable: null,
      schedule_id: null,
      trigger_id: null,
      kind: 'tool',
      parent_execution_id: null,
      step_key: null,
      ...fields,
    });

  describe('ExecutionsStore', () => {
    it('inserts more concurrent rows than one batch holds, every column as it was given', async () => {
      const batch = Array.from({ length: 250 }, (_, i) => newRow({ request_id: `req-${i}`, progress: i % 100 }));
      await Promise.all(batch.map((row) => store().insert(row)));
      const stored = await rows().findBy(batch.map(({ id }) => ({ id })));
      expect(stored).toHaveLength(250);
      const byId = new Map(stored.map((row) => [row.id, row]));
      for (const row of batch) expect({ ...byId.get(row.id) }).toEqual({ ...row });
    });

    it('a row that cannot be stored fails alone: the rest of its batch is written', async () => {
      const good = Array.from({ length: 10 }, () => newRow());
      const unstorable = newRow({ input: { text: 'nul \u0000 is not valid in jsonb' } });
      const duplicate = newRow({ id: good[3].id });
      const outcomes = await Promise.allSettled([...good, unstorable, duplicate].map((row) => store().insert(row)));
      expect(outcomes.map((o) => o.status)).toEqual([...good.map(() => 'fulfilled'), 'rejected', 'rejected']);
      expect(await rows().countBy(good.map(({ id }) => ({ id })))).toBe(10);
      expect(await rows().findOneBy({ id: unstorable.id })).toBeNull();
    });

    it('every caller of a batch the database refuses gets the error, and writes work again after', async () => {
      const dataSource = suite.t.app.get(DataSource);
      await dataSource.query('ALTER TABLE executions RENAME TO executions_away');
      let outcomes: PromiseSettledResult<void>[];
      try {
        outcomes = await Promise.allSettled([newRow(), newRow(), newRow()].map((row) => store().insert(row)));
      } finally {
        await dataSource.query('ALTER TABLE executions_away RENAME TO executions');
      }
      expect(outcomes.map((o) => o.status === 'rejected' && String(o.reason))).toEqual([
        expect.stringMatching(/executions/),
        expect.stringMatching(/executions/),
        expect.stringMatching(/executions/),
      ]);
      const after = newRow();
      await store().insert(after);
      expect(await rows().findOneBy({ id: after.id })).not.toBeNull();
    });

    it('the first terminal state wins, also between two finishes of one row in the same batch', async () => {
      const [a, b, c] = [newRow(), newRow({ progress: 40 }), newRow({ status: 'queued', started_at: null })];
      await Promise.all([a, b, c].map((row) => store().insert(row)));
      const [cancelA, successA, successB, errorC] = await Promise.all([
        store().finish(a.id, terminal('cancelled', null, null), a.started_at),
        store().finish(a.id, terminal('success', { result: 1 }, null), a.started_at),
        store().finish(b.id, terminal('success', { result: 2 }, null), b.started_at),
        store().finish(c.id, terminal('error', null, { code: 'TOOL_ERROR', message: 'no', retryable: false }), c.started_at),
      ]);
      expect(cancelA).toMatchObject({ id: a.id, status: 'cancelled', result: null, progress: 0 });
      expect(successA).toEqual(cancelA);
      expect(successB).toMatchObject({ status: 'success', result: { result: 2 }, progress: 100 });
      expect(successB.duration_ms).toBe(successB.completed_at!.getTime() - b.started_at!.getTime());
      expect(errorC).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR' }, progress: 0, duration_ms: null });
      expect(await rows().findOneBy({ id: a.id })).toMatchObject({ status: 'cancelled' });

      const late = await store().finish(b.id, terminal('error', null, { code: 'TOOL_ERROR', message: 'late', retryable: false }), b.started_at);
      expect(late).toEqual(successB);
    });

    it('a finish of a row that does not exist fails only its own caller', async () => {
      const row = newRow();
      await store().insert(row);
      const [missing, found] = await Promise.allSettled([
        store().finish('exec_000000000000000000000000', terminal('cancelled', null, null), null),
        store().finish(row.id, terminal('success', { result: 3 }, null), row.started_at),
      ]);
      expect(missing).toEqual({ status: 'rejected', reason: expect.any(EntityNotFoundError) });
      expect(found).toEqual({ status: 'fulfilled', value: expect.objectContaining({ status: 'success', result: { result: 3 } }) });
    });
    it("a start claims the row for its job: that job's next try takes it again, another job's does not", async () => {
      const row = newRow({ status: 'queued', started_at: null });
      await store().insert(row);
      const first = await store().start(row.id, new Date(), row.id);
      expect(first).toMatchObject({ status: 'running', claimed_by: row.id });
      // The same job after a try whose reply was lost: the row is its own.
      expect(await store().start(row.id, new Date(), row.id)).toMatchObject({ status: 'running', claimed_by: row.id });
      // A run after answers has a job of its own: it never takes a row another job runs.
      expect(await store().start(row.id, new Date(), `${row.id}:1`)).toBeNull();
      await store().finish(row.id, terminal('success', { result: 4 }, null), first!.started_at);
      expect(await store().start(row.id, new Date(), row.id)).toBeNull();
    });

    it('concurrent starts share statements: each queued row starts once, for one of two jobs claiming it together', async () => {
      const queued = Array.from({ length: 150 }, () => newRow({ status: 'queued', started_at: null }));
      await Promise.all(queued.map((row) => store().insert(row)));
      const [started, contested] = await Promise.all([
        Promise.all(queued.slice(1).map((row) => store().start(row.id, new Date(), row.id))),
        Promise.all([store().start(queued[0].id, new Date(), queued[0].id), store().start(queued[0].id, new Date(), `${queued[0].id}:1`)]),
      ]);
      expect(started.map((row) => row?.claimed_by)).toEqual(queued.slice(1).map(({ id }) => id));
      const winners = contested.filter((row) => row !== null);
      expect(winners).toHaveLength(1);
      expect(await rows().findOneBy({ id: queued[0].id })).toMatchObject({ status: 'running', claimed_by: winners[0]!.claimed_by });
    });
  });

  describe('sync executions', () => {
    const invoke = (account: TestAccount, toolId: string, payload: object, query = '') =>
      suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key: account.key, payload });
    /** GET /v1/executions: what a client can see. */
    const listed = async (account: TestAccount, query = '') =>
      (await suite.t.request({ method: 'GET', url: `/v1/executions?limit=100${query}`, key: account.key })).json().executions as Array<Pick<Execution, 'id' | 'status' | 'progress' | 'tool_id' | 'completed_at'>>;
    /** Every row of the account, every column. */
    const stored = (account: TestAccount) => rows().findBy({ account_id: account.id });
    const principalOf = (account: TestAccount) => ({ accountId: account.id, keyId: 'key_runner' }) as Principal;
    const runSleep = (account: TestAccount, ms: number, options: { timeout?: number; callerGone?: AbortSignal } = {}) =>
      suite.t.app.get(ExecutionRunner).runSync({
        principal: principalOf(account),
        tool: suite.t.app.get(ToolRegistry).get('test-sleep'),
        input: { ms, ignore_signal: false },
        options: { async: false, cache: false, timeout: options.timeout },
        requestId: null,
        callerGone: options.callerGone,
      });

    it('concurrent invokes end as exactly one terminal row each, with their own results', async () => {
      const account = await suite.t.createAccount(`burst-${mode.name}`);
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => invoke(account, 'json-transform', { inputs: { expression: '$sum(n)', data: { n: [i, 1000] } }, options: { cache: false } })),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(answers.map(() => 200));
      expect(answers.map((a) => a.json().result.result)).toEqual(answers.map((_, i) => i + 1000));
      const written = await stored(account);
      expect(written).toHaveLength(40);
      const byId = new Map(written.map((row) => [row.id, row]));
      for (const answer of answers) {
        const { execution_id, result } = answer.json();
        expect(byId.get(execution_id)).toMatchObject({ status: 'success', mode: 'sync', progress: 100, result });
      }
    });

    it('tools that finish around the delay, either side of it, each leave one terminal row', async () => {
      const account = await suite.t.createAccount(`edge-${mode.name}`);
      const durations = Array.from({ length: 24 }, (_, i) => RUNNING_ROW_DELAY_MS - 12 + i);
      const answers = await Promise.all(durations.map((ms) => invoke(account, 'test-sleep', { ms })));
      expect(answers.map((a) => a.json().result)).toEqual(durations.map((ms) => ({ slept_ms: ms })));
      const written = await stored(account);
      expect(written.map((row) => row.id).sort()).toEqual(answers.map((a) => a.json().execution_id).sort());
      expect(written.every((row) => row.status === 'success' && row.progress === 100)).toBe(true);
    });

    it('a tool that outlives the delay is listed as running while it runs, then ends in that same row', async () => {
      const account = await suite.t.createAccount(`slow-${mode.name}`);
      const answer = invoke(account, 'test-sleep', { ms: 1_500 });
      const running = await until('the sync execution to be listed as running', async () => (await listed(account, '&status=running'))[0]);
      expect(running).toMatchObject({ tool_id: 'test-sleep', status: 'running', completed_at: null });
      const done = await answer;
      expect(done.json()).toMatchObject({ status: 'success', execution_id: running.id });
      expect(await stored(account)).toEqual([expect.objectContaining({ id: running.id, mode: 'sync', status: 'success', progress: 100 })]);
    });

    it('DELETE of a running sync execution cancels it: the caller gets 409 and the row says cancelled', async () => {
      const account = await suite.t.createAccount(`delete-${mode.name}`);
      const answer = invoke(account, 'test-sleep', { ms: 20_000 });
      const running = await until('the sync execution to run', async () => (await listed(account, '&status=running'))[0]);
      const cancel = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${running.id}`, key: account.key });
      expect(cancel.json()).toMatchObject({ status: 'cancelled', execution_id: running.id });
      const done = await answer;
      expect(done.statusCode).toBe(409);
      expect(await stored(account)).toEqual([expect.objectContaining({ id: running.id, status: 'cancelled' })]);
    });

    it('a caller gone before the row is written ends in one cancelled row', async () => {
      const account = await suite.t.createAccount(`gone-${mode.name}`);
      const gone = new AbortController();
      setTimeout(() => gone.abort(), RUNNING_ROW_DELAY_MS / 5);
      const { execution } = await runSleep(account, 5_000, { callerGone: gone.signal });
      expect(execution.status).toBe('cancelled');
      expect(await stored(account)).toEqual([expect.objectContaining({ id: execution.id, status: 'cancelled', mode: 'sync' })]);
    });

    it('a timeout before the row is written ends in one TOOL_TIMEOUT row', async () => {
      const account = await suite.t.createAccount(`timeout-${mode.name}`);
      const { execution } = await runSleep(account, 5_000, { timeout: RUNNING_ROW_DELAY_MS / 5000 });
      expect(execution).toMatchObject({ status: 'error', error: { code: 'TOOL_TIMEOUT', retryable: true } });
      expect(await stored(account)).toEqual([expect.objectContaining({ id: execution.id, status: 'error', error: expect.objectContaining({ code: 'TOOL_TIMEOUT' }) })]);
    });

    it('a tool that finishes while its running row is still being written ends in that row, finished', async () => {
      const account = await suite.t.createAccount(`race-${mode.name}`);
      const dataSource = suite.t.app.get(DataSource);
      // This account's inserts take longer than the tool runs: the finish must wait for the insert.
      await dataSource.query(`
        CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.account_id = '${account.id}' THEN PERFORM pg_sleep(${(RUNNING_ROW_DELAY_MS * 4) / 1000}); END IF;
          RETURN NEW;
        END $$`);
      await dataSource.query('CREATE TRIGGER slow_insert BEFORE INSERT ON executions FOR EACH ROW EXECUTE FUNCTION slow_insert()');
      try {
        const done = await invoke(account, 'test-sleep', { ms: RUNNING_ROW_DELAY_MS * 2 });
        expect(done.statusCode).toBe(200);
        expect(await stored(account)).toEqual([expect.objectContaining({ id: done.json().execution_id, status: 'success', result: { slept_ms: RUNNING_ROW_DELAY_MS * 2 } })]);
      } finally {
        await dataSource.query('DROP TRIGGER slow_insert ON executions');
        await dataSource.query('DROP FUNCTION slow_insert()');
      }
    });
  });
  describe('when the database refuses the end of a fast sync execution', () => {
    const sql = (query: string) => suite.t.app.get(DataSource).query(query);
    /** The real database refuses the next `times` inserts of test-record executions (a sequence: refusals survive their own rollback). */
    const refuseInserts = async (times: number) => {
      await sql('DROP SEQUENCE IF EXISTS test_refusals');
      await sql('CREATE SEQUENCE test_refusals');
      await sql(`CREATE OR REPLACE FUNCTION test_refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF nextval('test_refusals') <= ${times} THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await sql('DROP TRIGGER IF EXISTS test_refuse ON executions');
      await sql("CREATE TRIGGER test_refuse BEFORE INSERT ON executions FOR EACH ROW WHEN (NEW.tool_id = 'test-record') EXECUTE FUNCTION test_refuse_insert()");
    };
    afterEach(() => sql('DROP TRIGGER IF EXISTS test_refuse ON executions'));
    const invoke = () => suite.t.request({ method: 'POST', url: '/v1/tools/test-record/invoke', key: suite.acme.key, payload: {} });

    it('writes it again: a refusal that passes leaves the record', async () => {
      await refuseInserts(1);
      const res = await invoke();
      expect(res.json()).toMatchObject({ status: 'success', result: { recorded: true } });
      expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${res.json().execution_id}`, key: suite.acme.key })).json()).toMatchObject({ status: 'success' });
    });

    it('still answers the outcome of a tool that ran when every write is refused (the record is lost, not the answer)', async () => {
      await refuseInserts(100);
      const res = await invoke();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'success', result: { recorded: true } });
      expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${res.json().execution_id}`, key: suite.acme.key })).statusCode).toBe(404);
    });
  });
});
