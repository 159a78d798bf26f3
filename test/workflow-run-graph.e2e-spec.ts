/**
 * A workflow run as a graph (docs/workflows.md#a-runs-graph) on both engines: the DAG it is pinned
 * to with each step's status and calls, read once and followed over Server-Sent Events until the
 * run ends; another account's run and an execution that is no run are 404.
 */
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

const DIAMOND = {
  name: 'diamond',
  steps: [
    { id: 'left', tool: 'test-sleep', inputs: { ms: 300 } },
    { id: 'right', tool: 'test-sleep', inputs: { ms: 600 } },
    { id: 'join', tool: 'json-transform', needs: ['left', 'right'], inputs: { expression: 'a + b', data: { a: '${{ steps.left.result.slept_ms }}', b: '${{ steps.right.result.slept_ms }}' } } },
    { id: 'never', tool: 'test-sleep', needs: ['join'], if: 'false', inputs: { ms: 1 } },
  ],
  outputs: { total: '${{ steps.join.result.result }}' },
};

interface GraphEvent {
  run: { id: string; status: string; progress: number; result?: Record<string, unknown> };
  steps: { id: string; needs: string[]; status: string; calls: { execution_id: string; step_key: string; status: string }[] }[];
}

/** The `graph` events of a whole SSE body. */
function graphEvents(body: string): GraphEvent[] {
  return body
    .split('\n\n')
    .filter((block) => block.startsWith('event: graph'))
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]) as GraphEvent);
}

const statuses = (graph: GraphEvent) => Object.fromEntries(graph.steps.map((step) => [step.id, step.status]));

describeEachEngine('workflow run graph', (mode) => {
  const suite = useTestApp(mode, { env: { RECONCILE_INTERVAL_SECONDS: '1' }, extensions: [TestToolsModule] });

  it('follows a run live: every change of a step, then the ended run with its outputs, and the stream ends', async () => {
    const saved = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: suite.acme.key, payload: DIAMOND });
    expect(saved.statusCode).toBe(201);
    const started = await suite.t.request({ method: 'POST', url: `/v1/workflows/${saved.json().id}/runs?async=true`, key: suite.acme.key, payload: {} });
    expect(started.statusCode).toBe(202);
    const runId = started.json().execution_id;

    const stream = await suite.t.request({ method: 'GET', url: `/v1/workflows/runs/${runId}/events`, key: suite.acme.key });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    const events = graphEvents(stream.body);
    expect(events[0].steps.map((step) => [step.id, step.needs])).toEqual([['left', []], ['right', []], ['join', ['left', 'right']], ['never', ['join']]]);
    expect(events.some((graph) => statuses(graph).left === 'success' && statuses(graph).right === 'running')).toBe(true);
    const last = events[events.length - 1];
    expect(last.run).toMatchObject({ id: runId, status: 'success', progress: 100, result: { total: 900 } });
    expect(statuses(last)).toEqual({ left: 'success', right: 'success', join: 'success', never: 'skipped' });
    expect(last.steps[2].calls).toEqual([expect.objectContaining({ step_key: 'join', status: 'success' })]);
    expect(stream.body).toMatch(/id: end\n/);

    const again = await suite.t.request({ method: 'GET', url: `/v1/workflows/runs/${runId}`, key: suite.acme.key });
    expect(again.json()).toEqual(last);
    const afterEnd = await suite.t.request({ method: 'GET', url: `/v1/workflows/runs/${runId}/events`, key: suite.acme.key, headers: { 'last-event-id': 'end' } });
    expect(afterEnd.statusCode).toBe(204);
  });

  it("answers 404 for another account's run and for an execution that is not a run", async () => {
    const saved = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: suite.acme.key, payload: { ...DIAMOND, name: 'diamond-private' } });
    const run = await suite.t.request({ method: 'POST', url: `/v1/workflows/${saved.json().id}/runs?async=true`, key: suite.acme.key, payload: {} });
    const other = await suite.t.createAccount('graph-other');
    for (const url of [`/v1/workflows/runs/${run.json().execution_id}`, `/v1/workflows/runs/${run.json().execution_id}/events`]) {
      const res = await suite.t.request({ method: 'GET', url, key: other.key });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    const call = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke', key: suite.acme.key, payload: { ms: 1 } });
    const notRun = await suite.t.request({ method: 'GET', url: `/v1/workflows/runs/${call.json().execution_id}`, key: suite.acme.key });
    expect(notRun.statusCode).toBe(404);
    expect(notRun.json().error.message).toContain('is not a workflow run');
  });
});
