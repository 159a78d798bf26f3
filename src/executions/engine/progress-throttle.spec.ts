import { ProgressThrottle } from './progress-throttle';

describe('ProgressThrottle', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes the first report at once and coalesces the rest into one write per interval', () => {
    const writes: Array<[number, string | null]> = [];
    const throttle = new ProgressThrottle(250, (p, m) => writes.push([p, m]));
    throttle.report(1, 'a');
    for (let i = 2; i <= 50; i++) throttle.report(i);
    expect(writes).toEqual([[1, 'a']]);
    jest.advanceTimersByTime(250);
    expect(writes).toEqual([[1, 'a'], [50, null]]);
    jest.advanceTimersByTime(1000);
    expect(writes).toHaveLength(2);
  });

  it('clamps and rounds, ignores non-numbers, and stops writing after stop()', () => {
    const writes: number[] = [];
    const throttle = new ProgressThrottle(100, (p) => writes.push(p));
    throttle.report(150.4);
    throttle.report(Number.NaN);
    jest.advanceTimersByTime(100);
    throttle.report(-3);
    expect(writes).toEqual([100, 0]);
    throttle.report(40);
    throttle.stop();
    jest.advanceTimersByTime(1000);
    expect(writes).toEqual([100, 0]);
  });
});
