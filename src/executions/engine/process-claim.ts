import { hostname } from 'node:os';

/** This process, as heartbeats and claims name it. */
export const PROCESS_ID = `${hostname()}:${process.pid}`;

/**
 * The claim a sync execution's row carries: the process that runs it (its caller waits on that
 * process). When that process stops its heartbeat, the row is ended at once, not at its deadline.
 */
export function processClaim(processId: string): string {
  return `process:${processId}`;
}
