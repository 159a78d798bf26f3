/**
 * The execution engine in one process (role all): async invokes, progress, cancel, timeouts,
 * SSE, caller disconnect and retention — embedded (PGlite + in-process) and distributed
 * (PostgreSQL + Bull on Redis).
 */
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import * as path from 'node:path';
import { DataSource } from 'typeorm';
import { Execution } from '../src/executions/engine/execution.entity';
import { RetentionService } from '../src/executions/engine/retention.service';
import { newExecutionId } from '../src/common/ids';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

describeEachEngine('async executions', (mode) => {
  const suite = useTestApp(mode, { env: { WORKER_CONCURRENCY: '2' }, extensions: [TestToolsModule] });

  const submit = async (toolId: string, inputs: object, query = '?async=true') => {
    const res = await suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key: suite.acme.key, payload: { inputs } });
    expect(res.statusCode).toBe(202);
    return res;
  };
  const read = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();
  const settled = (id: string, timeoutMs?: number) =>
    until(`${id} to finish`, async () => {
      const execution = await read(id);
      return ['success', 'error', 'cancelled'].includes(execution.status) ? execution : undefined;
    }, timeoutMs);

  it('answers 202 queued with Location and status_url, then runs to success', async () => {
    const res = await submit('json-transform', { expression: '$sum(n)', data: { n: [1, 2, 3] } });
    const body = res.json();
    expect(body).toEqual({ status: 'queued', execution_id: expect.stringMatching(/^exec_/), message: expect.any(String), status_url: `/v1/executions/${body.execution_id}` });
    expect(res.headers.location).toBe(body.status_url);
    const done = await settled(body.execution_id);
    expect(done).toMatchObject({ status: 'success', mode: 'async', progress: 100, result: { result: 6 } });
    expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expect(done.duration_ms).toBe(Date.parse(done.completed_at) - Date.parse(done.started_at));
  });

  it('options.async in the envelope works like ?async=true; bad input is refused before queueing', async () => {
    const res = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: suite.acme.key, payload: { inputs: { expression: '1', data: {} }, options: { async: true } } });
    expect(res.statusCode).toBe(202);
    const bad = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke?async=true', key: suite.acme.key, payload: { inputs: { data: {} } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).not.toHaveProperty('execution_id');
  });

  it('persists progress while running, visible to GET', async () => {
    const { execution_id } = (await submit('test-sleep', { ms: 1500 })).json();
    const midway = await until('progress between 0 and 100', async () => {
      const execution = await read(execution_id);
      return execution.status === 'running' && execution.progress > 0 && execution.progress < 100 ? execution : undefined;
    });
    expect(midway.progress_message).toMatch(/^step \d+$/);
    expect((await settled(execution_id)).progress).toBe(100);
  });

  it('cancels a queued execution (it never runs) and a running one (within a second)', async () => {
    const first = (await submit('test-sleep', { ms: 20_000 })).json().execution_id;
    const second = (await submit('test-sleep', { ms: 20_000 })).json().execution_id;
    const third = (await submit('test-sleep', { ms: 20_000 })).json().execution_id;
    await until('two running', async () => ((await read(first)).status === 'running' && (await read(second)).status === 'running' ? true : undefined));
    expect((await read(third)).status).toBe('queued');

    const cancelQueued = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${third}`, key: suite.acme.key });
    expect(cancelQueued.json()).toMatchObject({ status: 'cancelled', execution_id: third });

    const started = Date.now();
    for (const id of [first, second]) {
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: suite.acme.key })).statusCode).toBe(200);
    }
    for (const id of [first, second]) {
      await until(`${id} aborted in the tool`, async () => (existsSync(path.join(suite.t.workspaceRoot, `aborted-${id}`)) ? true : undefined), 1_000);
      expect((await read(id)).status).toBe('cancelled');
    }
    expect(Date.now() - started).toBeLessThan(1_500);
    // The queued one stays cancelled and never starts, even once workers are free.
    const next = (await submit('test-sleep', { ms: 0 })).json().execution_id;
    await settled(next);
    expect(await read(third)).toMatchObject({ status: 'cancelled', started_at: null });
  });

  it('ends a late tool TOOL_TIMEOUT; a tool that ignores the abort is still cancelled and its result dropped', async () => {
    const slow = (await submit('test-sleep', { ms: 5_000 }, '?async=true&timeout=1')).json().execution_id;
    expect(await settled(slow)).toMatchObject({ status: 'error', error: { code: 'TOOL_TIMEOUT', retryable: true } });

    const stubborn = (await submit('test-sleep', { ms: 1_500, ignore_signal: true })).json().execution_id;
    await until('running', async () => ((await read(stubborn)).status === 'running' ? true : undefined));
    await suite.t.request({ method: 'DELETE', url: `/v1/executions/${stubborn}`, key: suite.acme.key });
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // past the tool's own end
    expect(await read(stubborn)).toMatchObject({ status: 'cancelled' });
    expect((await read(stubborn)).result).toBeUndefined();
  });

  it('streams status, progress and the final result as Server-Sent Events, then ends', async () => {
    const { execution_id } = (await submit('test-sleep', { ms: 600 })).json();
    const res = await suite.t.request({ method: 'GET', url: `/v1/executions/${execution_id}/events`, key: suite.acme.key });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const events = res.body
      .split('\n\n')
      .filter((block) => block.startsWith('event:'))
      .map((block) => ({ event: block.split('\n')[0].slice(7), data: JSON.parse(block.split('\n')[1].slice(6)) }));
    expect(events[0].event).toBe('status');
    expect(events.some((e) => e.event === 'progress' && e.data.progress > 0)).toBe(true);
    expect(events.filter((e) => e.event === 'status').map((e) => e.data.status)).toContain('success');
    expect(events[events.length - 1]).toEqual({ event: 'result', data: expect.objectContaining({ id: execution_id, status: 'success', result: { slept_ms: 600 } }) });

    // Every event carries its id, for a resume with Last-Event-ID; the client is told how soon to reconnect.
    expect(res.body).toMatch(/^retry: \d+\n\n/);
    const blocks = res.body.split('\n\n').filter((block) => block.startsWith('event:'));
    expect(blocks.every((block) => /\nid: \S+$/.test(block))).toBe(true);
    expect(blocks[blocks.length - 1]).toMatch(/\nid: end$/);

    const finished = await suite.t.request({ method: 'GET', url: `/v1/executions/${execution_id}/events`, key: suite.acme.key });
    expect(finished.body).toMatch(/^retry: \d+\n\nevent: status\n.*\nid: success:100\n\nevent: result\n/);
    // Resumed: the state the client holds is not sent again; after the result there is nothing more (204: EventSource stops).
    const resumed = await suite.t.request({ method: 'GET', url: `/v1/executions/${execution_id}/events`, key: suite.acme.key, headers: { 'last-event-id': 'success:100' } });
    expect(resumed.body).toMatch(/^retry: \d+\n\nevent: result\n/);
    const afterEnd = await suite.t.request({ method: 'GET', url: `/v1/executions/${execution_id}/events`, key: suite.acme.key, headers: { 'last-event-id': 'end' } });
    expect(afterEnd.statusCode).toBe(204);
    expect(afterEnd.body).toBe('');
    const other = await suite.t.createAccount(`other-${mode.name}`);
    expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${execution_id}/events`, key: other.key })).statusCode).toBe(404);
  });

  it('a sync caller that disconnects cancels its execution', async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = new URL('/v1/tools/test-sleep/invoke', await suite.t.app.getUrl());
    const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${suite.acme.key}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ ms: 20_000 }));
    const running = await until('the sync execution to run', async () => {
      const list = (await suite.t.request({ method: 'GET', url: '/v1/executions?status=running&tool_id=test-sleep', key: suite.acme.key })).json();
      return list.executions.find((e: { id: string }) => !existsSync(path.join(suite.t.workspaceRoot, `aborted-${e.id}`)));
    });
    req.destroy();
    const done = await settled(running.id, 2_000);
    expect(done.status).toBe('cancelled');
  });

  it('the retention job deletes executions older than the account tier keeps them', async () => {
    const free = await suite.t.createAccount(`free-${mode.name}`, 'free');
    const pro = await suite.t.createAccount(`pro-${mode.name}`, 'pro');
    const repo = suite.t.app.get(DataSource).getRepository(Execution);
    const day = 86_400_000;
    const row = (accountId: string, ageDays: number) =>
      repo.create({ id: newExecutionId(Date.now() - ageDays * day), account_id: accountId, key_id: 'key_x', tool_id: 'json-transform', tool_version: '1.0.0', status: 'success', mode: 'sync', progress: 100, input: {}, created_at: new Date(Date.now() - ageDays * day) });
    const rows = [row(free.id, 31), row(free.id, 29), row(pro.id, 31), row(pro.id, 91)];
    await repo.save(rows);
    const deleted = await suite.t.app.get(RetentionService).purge();
    expect(deleted).toBeGreaterThanOrEqual(2);
    const left = (await repo.findBy(rows.map((r) => ({ id: r.id })))).map((r) => r.id).sort();
    expect(left).toEqual([rows[1].id, rows[2].id].sort());
  });
});
