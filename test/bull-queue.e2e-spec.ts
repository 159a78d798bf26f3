/**
 * The Bull queue's edges that only a real Redis shows.
 */
import Bull from 'bull';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BullExecutionQueue, EXECUTIONS_QUEUE } from '../src/executions/engine/queue/bull.queue';
import { ExecutionJob } from '../src/executions/engine/queue/execution-queue';
import { redisUrl } from './support/engines';
import { freePort } from './support/free-port';

describe('BullExecutionQueue', () => {
  it('stops quietly before its blocking connection is up (a SIGTERM right after start)', async () => {
    // Nothing listens on this loopback port: the blocking connection keeps reconnecting.
    const refused = `redis://127.0.0.1:${await freePort()}`;
    const clients: Redis[] = [];
    let blocking: Redis | undefined;
    const queue = new Bull<ExecutionJob>(EXECUTIONS_QUEUE, {
      prefix: `t${randomBytes(5).toString('hex')}`,
      createClient: (type) => {
        const client = new Redis(type === 'bclient' ? refused : redisUrl(), { enableReadyCheck: false, maxRetriesPerRequest: null, retryStrategy: () => 20 });
        client.on('error', () => undefined); // the refused connection's attempts
        clients.push(client);
        if (type === 'bclient') blocking = client;
        return client;
      },
    });
    queue.on('error', () => undefined); // Bull passes on the refused connection's attempts
    const executions = new BullExecutionQueue(queue);
    try {
      executions.consume(async () => undefined, async () => undefined, 1);
      await queue.isReady();
      await sleep(100); // Bull has asked the blocking connection for its name, which waits offline
      expect(blocking?.status).toMatch(/connecting|reconnecting/);
      await executions.stop(2_000);
      // Jest fails the test on an unhandled rejection: the stop must leave none behind.
      await sleep(100);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });
});
