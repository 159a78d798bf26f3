import { setImmediate as afterIo } from 'node:timers/promises';

/**
 * Milliseconds of evaluation that all running expressions together may take before the event loop
 * gets a turn (timers, I/O, other requests). jsonata awaits only settled promises between its
 * steps, so without this a runaway expression would hold the loop until its deadline.
 */
export const SLICE_MS = 5;

/** When the current slice began; 0 once the loop has had a turn since. */
let sliceStarted = 0;
const endSlice = () => {
  sliceStarted = 0;
};

/**
 * Called before every evaluation step of every expression begun at `began`: resolves at once while
 * the slice lasts, else after the event loop has polled for I/O. The slice is shared, so a hundred
 * runaway expressions take the loop no longer between two polls than one does. An evaluation in
 * its first slice's length never waits: a short one finishes as it would alone rather than
 * queueing behind the runaways for one turn per step (measured: a trivial call's p50 went from 129
 * to a few ms beside four runaway expressions).
 */
export function shareEventLoop(now: number, began: number): Promise<void> | undefined {
  if (sliceStarted === 0) {
    sliceStarted = now;
    // Queued before any evaluation's own wait below, so it runs first and the resumed one starts a slice.
    setImmediate(endSlice);
    return undefined;
  }
  return now - sliceStarted < SLICE_MS || now - began < SLICE_MS ? undefined : afterIo();
}
