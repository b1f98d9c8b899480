/**
 * The finer poll the waits use where a change is likely soon (the reboot wait around the reboot
 * durations a run has seen, a polling drain awaiting its evicted pods' exits): a fifth of the
 * executor's interval, 1 s at 5 s, at least 1 ms. One figure, so the two waits stay alike.
 */
export function finePollMs(pollMs: number): number {
  return Math.max(1, Math.round(pollMs / 5));
}
