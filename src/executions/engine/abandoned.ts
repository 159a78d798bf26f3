import type { Logger } from '@nestjs/common';
import type { ErrorBody } from '../../common/errors';
import { executionsAbandoned } from '../../common/probes';

/**
 * Said of every execution the engine ends without knowing whether its tool finished: a retry may
 * repeat a side effect (a notification, a deploy), so the client must not read the error as
 * "nothing happened".
 */
export const OUTCOME_UNKNOWN_SUGGESTION =
  'It may have run, in part or in full: check its effect before calling again. A retry is safe only when the call carries an idempotency key its target honours.';

/** An execution whose tool had started when its runner was lost: `details.outcome_unknown` is true. */
export function outcomeUnknown(message: string): ErrorBody {
  return { code: 'INTERNAL_ERROR', message, retryable: true, details: { outcome_unknown: true }, suggestion: OUTCOME_UNKNOWN_SUGGESTION };
}

export const LOST_WORKER_ERROR = outcomeUnknown('The worker running this execution was lost (killed or unresponsive) after its tool started: it may have run.');

export const RESTART_ERROR = outcomeUnknown('The service stopped while this execution was running: it may have run.');

export const LOST_PROCESS_ERROR = outcomeUnknown('The API process running this sync call was lost (killed or cut off) after its tool started: it may have run.');

/** A queued call that carried credentials, whose job was lost: the row never held them in clear, and no key here opens its sealed copy. */
export const SECRETS_LOST_ERROR: ErrorBody = {
  code: 'INTERNAL_ERROR',
  message:
    'This call carried secret inputs, which are never stored in clear, and its queued job was lost (the service restarted or the queue lost its data) with no SECRETS_KEY here to open their sealed copy: it never started. Call it again.',
  retryable: true,
  details: { outcome_unknown: false },
};

/** Who ends executions for want of a runner; a metric label. */
export type AbandonedBy = 'sweeper' | 'reconciler' | 'lost-worker' | 'lost-process' | 'restart';

/** One log line with the execution's id, and one metric, per execution the engine ends for want of a runner. */
export function reportAbandoned(logger: Logger, executionId: string, by: AbandonedBy, reason: string): void {
  logger.warn(`Execution ${executionId} ended by the ${by}: ${reason}`);
  executionsAbandoned.publish({ by, reason });
}
