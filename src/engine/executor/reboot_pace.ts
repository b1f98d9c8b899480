/**
 * When the reboot wait reads the boot id next (issue 18: virtual overhead).
 *
 * At a fixed poll interval the wait sees a node back up to an interval after it came back (on
 * average half: 2.5 s of every node at 5 s polling) unless its reboot happens to end on the poll
 * grid. Machines of one cluster take about as long to reboot as each other, so once a
 * run has seen some come back, the wait polls finely only around those durations and at the
 * executor's interval elsewhere. It only changes when the boot id is read, never what a reading
 * decides; a run with nothing seen yet (the first node, a restarted controller) polls at the
 * interval as before. Inside the window it polls at `finePollMs`.
 */
import { finePollMs } from "../fine_poll.ts";

/** Durations seen that spread wider than this many intervals predict nothing: no fine polling. */
const MAX_WINDOW_INTERVALS = 8;
/** Only the latest reboots count: a cluster's reboot time drifts (a new kernel, a BIOS update). */
const REMEMBERED = 3;

/** A reboot seen back: after more than `notBackMs` and at most `backMs` from the wait's start. */
interface Seen {
  readonly notBackMs: number;
  readonly backMs: number;
}

export class RebootPace {
  #seen: Seen[] = [];

  /**
   * A node was seen back `backMs` after its wait began; its last poll that did not see it back
   * was at `notBackMs` (0 when the first poll did).
   */
  seen(notBackMs: number, backMs: number): void {
    this.#seen.push({ notBackMs, backMs });
    if (this.#seen.length > REMEMBERED) this.#seen.shift();
  }

  /** How long to sleep before the next poll, `elapsedMs` into a wait polling every `pollMs`. */
  sleepMs(elapsedMs: number, pollMs: number): number {
    const window = this.#window(pollMs);
    if (window === undefined) return pollMs;
    const [from, to] = window;
    // Before the window: at the interval, but never past the window's start.
    if (elapsedMs < from) return Math.max(1, Math.min(pollMs, from - elapsedMs));
    if (elapsedMs < to) return finePollMs(pollMs);
    return pollMs;
  }

  /**
   * Where the next boot is likely, as elapsed times: an interval either side of the spans the
   * latest reboots were seen back in; none until one was seen, or when they spread too wide.
   */
  #window(pollMs: number): readonly [number, number] | undefined {
    if (this.#seen.length === 0) return undefined;
    const from = Math.min(...this.#seen.map((s) => s.notBackMs)) - pollMs;
    const to = Math.max(...this.#seen.map((s) => s.backMs)) + pollMs;
    if (to - from > MAX_WINDOW_INTERVALS * pollMs) return undefined;
    return [Math.max(0, from), to];
  }
}
