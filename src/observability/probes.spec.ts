import { addExecutionObserver, captureTrace, currentExecution, observeExecution, resumeTrace, setTracePropagation } from '../common/probes';

describe('observability probes', () => {
  const info = { executionId: 'exec_1', toolId: 'json-transform', accountId: 'acc_1', keyId: 'key_1' };

  it('runs an execution bare when nothing observes, and inside every observer, first installed outermost', async () => {
    expect(await observeExecution(info, async () => ({ status: 'success' }))).toEqual({ status: 'success' });
    const seen: string[] = [];
    const removeOuter = addExecutionObserver(async (i, run) => (seen.push(`outer ${i.toolId}`), run().finally(() => seen.push('outer end'))));
    const removeInner = addExecutionObserver(async (_i, run) => (seen.push('inner'), run().finally(() => seen.push('inner end'))));
    try {
      await observeExecution(info, async () => (seen.push('tool'), { status: 'error' }));
      expect(seen).toEqual(['outer json-transform', 'inner', 'tool', 'inner end', 'outer end']);
    } finally {
      removeInner();
      removeOuter();
    }
    seen.length = 0;
    await observeExecution(info, async () => (seen.push('tool'), { status: 'success' }));
    expect(seen).toEqual(['tool']);
  });

  it("tells the running tool's code which execution it runs in, observed or not, and nothing outside one", async () => {
    expect(currentExecution()).toBeUndefined();
    expect(await observeExecution(info, async () => ({ status: 'success', seen: currentExecution() }))).toEqual({ status: 'success', seen: info });
    const remove = addExecutionObserver(async (_i, run) => run());
    try {
      expect((await observeExecution(info, async () => ({ status: 'success', seen: currentExecution() }))).seen).toBe(info);
    } finally {
      remove();
    }
    expect(currentExecution()).toBeUndefined();
  });

  it('carries no trace context unless tracing installed its propagation', async () => {
    expect(captureTrace()).toBeUndefined();
    expect(await resumeTrace({ traceparent: 'x' }, async () => 'ran')).toBe('ran');
    const resumed: unknown[] = [];
    setTracePropagation({ capture: () => ({ traceparent: 'tp' }), resume: (carrier, fn) => (resumed.push(carrier), fn()) });
    try {
      expect(captureTrace()).toEqual({ traceparent: 'tp' });
      await resumeTrace({ traceparent: 'tp' }, async () => undefined);
      await resumeTrace(undefined, async () => undefined);
      expect(resumed).toEqual([{ traceparent: 'tp' }]);
    } finally {
      setTracePropagation(null);
    }
  });
});
