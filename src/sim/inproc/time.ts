/**
 * Virtual time for the in-process twin: the same rule the socket twin follows, without the
 * control endpoint. Time moves only when the client sleeps (`clock.sleep(ms)` fires every model
 * timer due on the way, as `TwinClock.sleep` asks the twin to), or while the client waits on a
 * server stream (a pull, an install), when the port moves it timer by timer exactly as the twin's
 * auto-advance does. Reads never move time: their timeouts (`timeoutClock`) wait on the clock
 * without driving it, so a slow read cannot let a reboot finish.
 */
import type { Clock } from "../../ports/clock.ts";
import type { SimClock } from "../clock.ts";

export class VirtualTime {
  /** One advance at a time, in call order (the twin serialises `/advance` the same way). */
  #chain: Promise<void> = Promise.resolve();

  constructor(readonly sim: SimClock) {}

  /** Moves time to `targetMs` (never backwards), firing due timers in order. */
  advanceTo(targetMs: number): Promise<void> {
    const p = this.#chain.then(() => this.sim.advanceTo(targetMs));
    this.#chain = p.catch(() => undefined);
    return p;
  }

  /**
   * The executor's clock: `sleep(ms)` moves the cluster's time by `ms` (from when it was asked),
   * then resolves. An aborted signal rejects with its reason, before or after the move.
   */
  readonly clock: Clock = {
    now: () => this.sim.now(),
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      await this.advanceTo(this.sim.now() + Math.max(0, ms));
      if (signal?.aborted) throw signal.reason;
    },
  };

  /** For timeouts raced against reads: waits on virtual time without moving it. */
  readonly timeoutClock: Clock = {
    now: () => this.sim.now(),
    sleep: (ms, signal) => this.sim.sleep(ms, signal),
  };

  /**
   * Moves time timer by timer while `open()` holds and a timer is due no later than
   * `deadlineMs`. Returns how the wait ended: `done` (no longer open), `deadline` (the next timer
   * lies beyond the call's deadline), `stuck` (no timer is pending, so nothing the model does
   * will close it) or `aborted`. Time is moved only to fire model timers, never just to reach a
   * deadline: a call that will not be answered costs no virtual time, as on the socket twin
   * (whose call deadlines are real-time bounds).
   */
  async runWhile(
    open: () => boolean,
    deadlineMs: number,
    signal?: AbortSignal,
  ): Promise<"done" | "deadline" | "stuck" | "aborted"> {
    while (open()) {
      if (signal?.aborted) return "aborted";
      const next = this.sim.nextTimerAt();
      if (next === undefined) return "stuck";
      if (next > deadlineMs) return "deadline";
      await this.advanceTo(next);
    }
    return "done";
  }
}
