import { sleep } from './sleep';

describe('ctx.sleep', () => {
  it('waits the time asked', async () => {
    const started = performance.now();
    await sleep(50, new AbortController().signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("stops at once with the call's abort reason, whether the call ends during the wait or before it", async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const started = performance.now();
    setTimeout(() => controller.abort(reason), 20);
    await expect(sleep(60_000, controller.signal)).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5000);
    await expect(sleep(60_000, controller.signal)).rejects.toBe(reason);
  });
});
