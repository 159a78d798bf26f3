import { Logger } from '@nestjs/common';
import { dependencyUnavailable, OutageLog, unreachableDependency } from './outages';
import { toErrorResponse } from './errors';

describe('unreachableDependency', () => {
  it('recognises pg, TypeORM, PGlite and ioredis connection failures, through their wrappers', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(unreachableDependency(refused)).toBe('database');
    expect(unreachableDependency(new AggregateError([refused], ''))).toBe('database');
    expect(unreachableDependency(Object.assign(new Error('query failed'), { driverError: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }) }))).toBe('database');
    expect(unreachableDependency(Object.assign(new Error('the database system is starting up'), { code: '57P03' }))).toBe('database');
    expect(unreachableDependency(new Error('Connection terminated unexpectedly'))).toBe('database');
    expect(unreachableDependency(new Error('PGlite is closed'))).toBe('database');
    expect(unreachableDependency(Object.assign(new Error('Reached the max retries per request limit (which is 1).'), { name: 'MaxRetriesPerRequestError' }))).toBe('redis');
    expect(unreachableDependency(new Error('Connection is closed.'))).toBe('redis');
  });

  it('leaves other errors alone: a query mistake is a bug, not an outage', () => {
    expect(unreachableDependency(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeNull();
    expect(unreachableDependency(new TypeError('x is undefined'))).toBeNull();
    expect(unreachableDependency(undefined)).toBeNull();
  });

  it('answers 503, retryable, with a retry time', () => {
    expect(toErrorResponse(dependencyUnavailable('database'))).toEqual({
      status: 503,
      unexpected: false,
      body: { code: 'INTERNAL_ERROR', message: expect.stringContaining('database is unavailable'), retryable: true, retry_after: 2, details: { unavailable: 'database' } },
    });
  });
});

describe('OutageLog', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs one line when a dependency goes and one when its probe answers again', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const waiting: Array<() => void> = [];
    const recovery = () => new Promise<void>((resolve) => waiting.push(resolve));
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => waiting.shift()?.());
    let up = false;
    const outages = new OutageLog({
      database: async () => {
        if (!up) throw new Error('still down');
      },
    });
    const first = recovery();
    for (let i = 0; i < 100; i++) outages.report('database', new Error('connect ECONNREFUSED'));
    expect(warn).toHaveBeenCalledTimes(1);
    up = true;
    await first;
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0][0]).toMatch(/database reachable again after .* s; 100 requests were refused/);
    const second = recovery();
    outages.report('database', new Error('again'));
    expect(warn).toHaveBeenCalledTimes(2); // a new outage is a new line
    await second;
  });
});
