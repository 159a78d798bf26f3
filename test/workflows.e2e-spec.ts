/**
 * Workflows (docs/workflows.md) on both engines: documents (JSON and YAML), validation naming the
 * step and field, versions, accounts kept apart; runs as executions whose steps are child
 * executions: a DAG with parallel steps, `if`, retry, for_each, continue_on_error, cancel mid-run,
 * a step asking for input, a narrowed key refused a step's tool, and idempotent run requests.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const DAG = {
  name: 'fan-in',
  description: 'Two parallel sleeps, then a sum of the inputs',
  inputs: { a: { type: 'integer', required: true }, b: { type: 'integer', default: 2 } },
  steps: [
    { id: 'left', tool: 'test-sleep', inputs: { ms: 400 } },
    { id: 'right', tool: 'test-sleep', inputs: { ms: 400 } },
    { id: 'sum', tool: 'json-transform', needs: ['left', 'right'], inputs: { expression: 'a + b + left + right', data: { a: '${{ inputs.a }}', b: '${{ inputs.b }}', left: '${{ steps.left.result.slept_ms }}', right: '${{ steps.right.result.slept_ms }}' } } },
  ],
  outputs: { total: '${{ steps.sum.result.result }}', slept: '${{ [steps.left.result.slept_ms, steps.right.result.slept_ms] }}' },
};

const METRICS_TOKEN = 'workflow-metrics-token-0123456789';

describeEachEngine('workflows', (mode) => {
  const suite = useTestApp(mode, { env: { RECONCILE_INTERVAL_SECONDS: '1', METRICS_TOKEN }, extensions: [TestToolsModule, ConformanceFixturesModule] });
  let accounts = 0;
  const account = () => suite.t.createAccount(`wf-${++accounts}`);

  const save = async (owner: TestAccount, document: object) => {
    const res = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: document });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  const run = (owner: TestAccount, workflowId: string, inputs: object, query = '', headers: Record<string, string> = {}) =>
    suite.t.request({ method: 'POST', url: `/v1/workflows/${workflowId}/runs${query}`, key: owner.key, payload: { inputs }, headers });
  const execution = async (owner: TestAccount, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: owner.key })).json();
  const ended = (owner: TestAccount, id: string) =>
    until(`run ${id} ended`, async () => {
      const current = await execution(owner, id);
      return ['success', 'error', 'cancelled'].includes(current.status) ? current : undefined;
    }, 20_000, 100);
  const stepsOf = async (owner: TestAccount, runId: string) => {
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=100', key: owner.key })).json();
    const details = await Promise.all(listed.executions.map((summary: { id: string }) => execution(owner, summary.id)));
    return details.filter((e) => e.parent_execution_id === runId).sort((x, y) => String(x.step_key).localeCompare(String(y.step_key)));
  };

  it('keeps documents as versions, from JSON or YAML, within their account', async () => {
    const owner = await account();
    const created = await save(owner, DAG);
    expect(created).toMatchObject({ id: expect.stringMatching(/^wf_/), name: 'fan-in', tool_id: 'workflow.fan-in', version: 1, publish: false, steps: 3 });

    const yaml = ['name: fan-in', 'inputs:', '  a: { type: integer, required: true }', 'steps:', '  - id: only', '    tool: json-transform', '    inputs:', "      expression: '$'", "      data: '${{ inputs.a }}'", 'outputs:', "  a: '${{ steps.only.result.result }}'", ''].join('\n');
    const updated = await suite.t.request({ method: 'PUT', url: `/v1/workflows/${created.id}`, key: owner.key, payload: yaml, headers: { 'content-type': 'application/yaml' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ version: 2, steps: 1 });
    const versions = (await suite.t.request({ method: 'GET', url: `/v1/workflows/${created.id}/versions`, key: owner.key })).json();
    expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/workflows?limit=1', key: owner.key })).json();
    expect(listed).toMatchObject({ total: 1, limit: 1, workflows: [{ id: created.id, version: 2 }] });

    const duplicate = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: { document: yaml } });
    expect(duplicate.statusCode).toBe(409);

    const stranger = await account();
    for (const url of [`/v1/workflows/${created.id}`, `/v1/workflows/${created.id}/versions`]) {
      expect((await suite.t.request({ method: 'GET', url, key: stranger.key })).statusCode).toBe(404);
    }
    expect((await run(stranger, created.id, { a: 1 })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/v1/workflows', key: stranger.key })).json().total).toBe(0);

    expect((await suite.t.request({ method: 'DELETE', url: `/v1/workflows/${created.id}`, key: owner.key })).statusCode).toBe(200);
    expect((await suite.t.request({ method: 'GET', url: `/v1/workflows/${created.id}`, key: owner.key })).statusCode).toBe(404);
  });

  it('accepts the example of docs/workflows.md as it is written', async () => {
    const doc = readFileSync(path.join(__dirname, '..', 'docs', 'workflows.md'), 'utf8');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)![1];
    const owner = await account();
    const res = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: yaml, headers: { 'content-type': 'application/yaml' } });
    expect(res.json()).toMatchObject({ name: 'scan-and-notify', publish: true, steps: 4 });
  });

  it('runs the README example as it is written', async () => {
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const yaml = /cat > fan-in\.yaml <<'YAML'\n([\s\S]*?)\nYAML\n/.exec(readme)![1];
    const owner = await account();
    const saved = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: yaml, headers: { 'content-type': 'application/yaml' } });
    const res = await suite.t.request({ method: 'POST', url: `/v1/workflows/${saved.json().id}/runs`, key: owner.key, payload: { n: 3 } });
    expect(res.json()).toMatchObject({ status: 'success', result: { total: 15 } });
  });

  it('refuses a document with the step and field at fault', async () => {
    const owner = await account();
    const problems = async (document: object) => {
      const res = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: document });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('INVALID_REQUEST');
      return res.json().error.details.problems as Array<{ path: string; step?: string; message: string }>;
    };
    const step = (extra: object) => ({ id: 'one', tool: 'json-transform', inputs: { expression: '$', data: 1 }, ...extra });
    expect(await problems({ name: 'bad', steps: [step({ tool: 'no-such-tool' })] })).toEqual([{ path: 'steps[0].tool', step: 'one', message: "unknown tool 'no-such-tool'" }]);
    expect(await problems({ name: 'bad', steps: [step({ needs: ['two'] }), step({ id: 'two', needs: ['one'] })] })).toEqual([
      expect.objectContaining({ step: 'one', message: expect.stringMatching(/cycle: one → two → one/) }),
    ]);
    expect(await problems({ name: 'bad', steps: [step({ inputs: { expression: '${{ $$$ ( }}', data: 1 } })] })).toEqual([
      expect.objectContaining({ path: 'steps[0].inputs.expression', step: 'one', message: expect.stringMatching(/does not parse/) }),
    ]);
    expect(await problems({ name: 'bad', steps: [step({}), step({ id: 'two', inputs: { expression: '$', data: '${{ steps.three.result }}' } }), step({ id: 'three' })] })).toEqual([
      expect.objectContaining({ path: 'steps[1].inputs.data', step: 'two', message: expect.stringMatching(/steps\.three, which is not upstream of 'two'/) }),
    ]);
    expect(await problems({ name: 'bad', steps: [{ id: 'nap', tool: 'test-sleep', inputs: { ms: 'long' } }] })).toEqual([
      expect.objectContaining({ path: 'steps[0].inputs.ms', step: 'nap', message: expect.stringMatching(/does not fit tool 'test-sleep'/) }),
    ]);
    expect(await problems({ name: 'Bad Name!', steps: [] })).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'name' }), expect.objectContaining({ path: 'steps' })]));
    const yaml = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: 'name: [unclosed', headers: { 'content-type': 'application/yaml' } });
    expect(yaml.statusCode).toBe(400);
    expect(yaml.json().error.message).toMatch(/not valid YAML/);
    const elsewhere = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: owner.key, payload: 'a: 1', headers: { 'content-type': 'application/yaml' } });
    expect(elsewhere.statusCode).toBe(415);
  });

  it('runs a DAG: parallel steps as child executions, then the step that needs both; outputs are the result', async () => {
    const owner = await account();
    const { id } = await save(owner, DAG);
    const res = await run(owner, id, { a: 40 }, '?timeout=20');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'success', result: { total: 842, slept: [400, 400] } });
    const runId = res.json().execution_id;
    const view = await execution(owner, runId);
    expect(view).toMatchObject({ kind: 'workflow', tool_id: 'workflow.fan-in', tool_version: '1', status: 'success', progress: 100, input: { a: 40, b: 2 } });
    const steps = await stepsOf(owner, runId);
    expect(steps.map((s) => [s.step_key, s.tool_id, s.status])).toEqual([
      ['left', 'test-sleep', 'success'],
      ['right', 'test-sleep', 'success'],
      ['sum', 'json-transform', 'success'],
    ]);
    const [left, right, sum] = steps.map((s) => ({ start: Date.parse(s.started_at), end: Date.parse(s.completed_at) }));
    expect(left.start).toBeLessThan(right.end); // the two ran side by side
    expect(right.start).toBeLessThan(left.end);
    expect(sum.start).toBeGreaterThanOrEqual(Math.max(left.end, right.end));
    const runs = (await suite.t.request({ method: 'GET', url: `/v1/workflows/${id}/runs`, key: owner.key })).json();
    expect(runs).toMatchObject({ total: 1, runs: [{ id: runId, status: 'success' }] });

    const metrics = (await suite.t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    expect(metrics).toMatch(/^tos_workflow_runs_finished_total\{status="success",role="all"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^tos_workflow_steps_started_total\{retry="false",role="all"\} [3-9]\d*$/m);

    const missing = await run(owner, id, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ details: { parameter: 'a' } });
  });

  it('skips a step whose if is false, fans out for_each, and retries a failing step before failing the run', async () => {
    const owner = await account();
    const { id } = await save(owner, {
      name: 'shapes',
      inputs: { items: { type: 'array', required: true }, notify: { type: 'boolean', default: false } },
      steps: [
        { id: 'double', tool: 'json-transform', for_each: '${{ inputs.items }}', inputs: { expression: '$ * 2', data: '${{ item }}' } },
        { id: 'notify', tool: 'json-transform', if: 'inputs.notify', needs: ['double'], inputs: { expression: '"sent"', data: {} } },
        { id: 'flaky', tool: 'test-misbehave', needs: ['double'], retry: { attempts: 3, backoff: 0.1, on: ['TOOL_ERROR'] }, continue_on_error: true, inputs: { mode: 'tool-error' } },
      ],
      outputs: { doubled: '${{ steps.double.result.result }}', notified: '${{ steps.notify.status }}', flaky: '${{ steps.flaky.status }}' },
    });
    const res = await run(owner, id, { items: [1, 2, 3] }, '?timeout=20');
    expect(res.json()).toMatchObject({ status: 'success', result: { doubled: [2, 4, 6], notified: 'skipped', flaky: 'error' } });
    const steps = await stepsOf(owner, res.json().execution_id);
    expect(steps.map((s) => s.step_key)).toEqual(['double[0]', 'double[1]', 'double[2]', 'flaky', 'flaky#2', 'flaky#3']);

    const { id: strict } = await save(owner, { name: 'strict', steps: [{ id: 'flaky', tool: 'test-misbehave', retry: { attempts: 2, backoff: 0 }, inputs: { mode: 'tool-error' } }, { id: 'after', tool: 'test-sleep', needs: ['flaky'], inputs: { ms: 0 } }] });
    const failed = await run(owner, strict, {}, '?timeout=20');
    expect(failed.json()).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: expect.stringMatching(/^Step 'flaky' failed/), details: { step: 'flaky' } } });
    expect((await stepsOf(owner, failed.json().execution_id)).map((s) => s.step_key)).toEqual(['flaky', 'flaky#2']);
  });

  it('cancels a run mid-way: its running step is cancelled and no further step starts', async () => {
    const owner = await account();
    const { id } = await save(owner, { name: 'long', steps: [{ id: 'nap', tool: 'test-sleep', inputs: { ms: 10_000 } }, { id: 'then', tool: 'test-sleep', needs: ['nap'], inputs: { ms: 0 } }] });
    const started = await run(owner, id, {}, '?async=true');
    expect(started.statusCode).toBe(202);
    const runId = started.json().execution_id;
    await until('the step running', async () => ((await stepsOf(owner, runId))[0]?.status === 'running' ? true : undefined));
    const cancelled = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${runId}`, key: owner.key });
    expect(cancelled.statusCode).toBe(200);
    await until('the step cancelled', async () => ((await stepsOf(owner, runId))[0]?.status === 'cancelled' ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // a sweep or two
    expect((await stepsOf(owner, runId)).map((s) => [s.step_key, s.status])).toEqual([['nap', 'cancelled']]);
    expect((await execution(owner, runId)).status).toBe('cancelled');
  });

  it('puts the run in input_required with a step’s question, and routes the answer to the step', async () => {
    const owner = await account();
    const { id } = await save(owner, {
      name: 'greet',
      steps: [{ id: 'ask', tool: 'conformance-test-input-required-result-elicitation', inputs: {} }],
      outputs: { greeting: '${{ steps.ask.result.content[0].text }}' },
    });
    const started = await run(owner, id, {}, '?timeout=10');
    expect(started.statusCode).toBe(202);
    expect(started.json()).toMatchObject({ status: 'input_required', input_requests: { user_name: { method: 'elicitation/create' } } });
    const runId = started.json().execution_id;
    const answered = await suite.t.request({ method: 'POST', url: `/v1/executions/${runId}/input`, key: owner.key, payload: { responses: { user_name: { action: 'accept', content: { name: 'Ada' } } } } });
    expect(answered.statusCode).toBe(202);
    expect(await ended(owner, runId)).toMatchObject({ status: 'success', result: { greeting: 'Hello, Ada!' } });
  });

  it('admits every step under the run’s key: a key narrowed away from a step’s tool fails that step', async () => {
    const owner = await account();
    const { id } = await save(owner, { name: 'narrow', steps: [{ id: 'ok', tool: 'json-transform', inputs: { expression: '1', data: {} } }, { id: 'nap', tool: 'test-sleep', needs: ['ok'], inputs: { ms: 0 } }] });
    const narrowed = { id: owner.id, key: await suite.t.createKey(owner.id, { name: 'narrow', type: 'service', tool_ids: ['json-transform'] }) };
    const res = await run(narrowed, id, {}, '?timeout=10');
    expect(res.json()).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN', details: { step: 'nap' } } });
    const steps = await stepsOf(owner, res.json().execution_id);
    expect(steps.map((s) => [s.step_key, s.status])).toEqual([['nap', 'error'], ['ok', 'success']]);
  });

  it('starts no more steps once the run’s key is revoked', async () => {
    const owner = await account();
    const { id } = await save(owner, { name: 'revoked', steps: [{ id: 'nap', tool: 'test-sleep', inputs: { ms: 1_500 } }, { id: 'after', tool: 'test-sleep', needs: ['nap'], inputs: { ms: 0 } }] });
    const issued = (await suite.t.request({ method: 'POST', url: '/v1/keys', key: owner.key, payload: { name: 'short-lived', type: 'service' } })).json();
    const caller = { id: owner.id, key: issued.key as string };
    const started = await run(caller, id, {}, '?async=true');
    expect(started.statusCode).toBe(202);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/keys/${issued.id}`, key: owner.key })).statusCode).toBe(200);
    const ended = await until('the run ended', async () => {
      const current = await execution(owner, started.json().execution_id);
      return ['success', 'error'].includes(current.status) ? current : undefined;
    }, 20_000, 100);
    expect(ended.error).toMatchObject({ code: 'UNAUTHORIZED', details: { step: 'after' } });
  });

  it('answers a retried run request with the first run (X-Idempotency-Key)', async () => {
    const owner = await account();
    const { id } = await save(owner, DAG);
    const headers = { 'x-idempotency-key': 'run-once' };
    const first = await run(owner, id, { a: 1 }, '?async=true', headers);
    const again = await run(owner, id, { a: 1 }, '?async=true', headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().execution_id).toBe(first.json().execution_id);
    await ended(owner, first.json().execution_id);
  });

  it('publishes a workflow as the tool workflow.<name> of its account alone, in REST and MCP, and runs it when called', async () => {
    const owner = await account();
    const { id } = await save(owner, { ...DAG, name: 'summed', publish: true });
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100&search=summed', key: owner.key })).json();
    expect(listed.tools).toEqual([expect.objectContaining({ id: 'workflow.summed', kind: 'workflow', workflow_id: id, inputs: { a: { type: 'integer', required: true }, b: { type: 'integer', default: 2, required: false } }, outputs: { total: { type: 'any' }, slept: { type: 'any' } } })]);
    const detail = (await suite.t.request({ method: 'GET', url: '/v1/tools/workflow.summed', key: owner.key })).json();
    expect(detail.input_schema).toEqual({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer', default: 2 } }, required: ['a'], additionalProperties: false });
    const stranger = await account();
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100&search=summed', key: stranger.key })).json().total).toBe(0);
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools/workflow.summed', key: stranger.key })).statusCode).toBe(404);

    const invoked = await suite.t.request({ method: 'POST', url: '/v1/tools/workflow.summed/invoke', key: owner.key, payload: { a: 3 } });
    expect(invoked.json()).toMatchObject({ status: 'success', result: { total: 805 } });
    const queued = await suite.t.request({ method: 'POST', url: '/v1/tools/workflow.summed/invoke?async=true', key: owner.key, payload: { inputs: { a: 3 } } });
    expect(queued.statusCode).toBe(202);
    expect(queued.headers.location).toBe(`/v1/executions/${queued.json().execution_id}`);
    expect((await suite.t.request({ method: 'POST', url: '/v1/tools/workflow.summed/invoke', key: stranger.key, payload: { a: 3 } })).statusCode).toBe(404);

    const mcp = (key: string, message: object) =>
      suite.t.request({ method: 'POST', url: '/v1/mcp', key, payload: { jsonrpc: '2.0', id: 1, ...message }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
    const names = async (key: string) => {
      const all: string[] = [];
      let cursor: string | undefined;
      do {
        const page = (await mcp(key, { method: 'tools/list', params: cursor ? { cursor } : {} })).json().result;
        all.push(...page.tools.map((tool: { name: string }) => tool.name));
        cursor = page.nextCursor;
      } while (cursor);
      return all;
    };
    expect(await names(owner.key)).toContain('workflow.summed');
    expect(await names(stranger.key)).not.toContain('workflow.summed');
    const called = (await mcp(owner.key, { method: 'tools/call', params: { name: 'workflow.summed', arguments: { a: 1 } } })).json().result;
    expect(called).toMatchObject({ structuredContent: { total: 803, slept: [400, 400] } });
    // As a task (2025-11-25 task augmentation): the task is the run.
    const task = (await mcp(owner.key, { method: 'tools/call', params: { name: 'workflow.summed', arguments: { a: 2 }, task: { ttl: 60_000 } } })).json().result.task;
    expect((await execution(owner, task.taskId)).tool_id).toBe('workflow.summed');
    const taskResult = (await mcp(owner.key, { method: 'tasks/result', params: { taskId: task.taskId } })).json().result;
    expect(taskResult).toMatchObject({ structuredContent: { total: 804, slept: [400, 400] } });
    const refused = (await mcp(stranger.key, { method: 'tools/call', params: { name: 'workflow.summed', arguments: { a: 1 } } })).json();
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: workflow.summed') });
  });
});
