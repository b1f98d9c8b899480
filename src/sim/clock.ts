import type { Clock } from "../ports/clock.ts";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * A virtual clock with a timer queue. Time moves only when `advance`, `advanceTo` or
 * `runUntilIdle` is called; pending sleeps resolve in time order (ties in creation order), and
 * microtasks run between timers so that code woken by one timer can schedule the next.
 */
export class SimClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  constructor(startMs: number) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const timer: Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#insert(timer);
    });
  }

  /** Calls `fn` after `ms` of virtual time (a fire-and-forget timer for simulators). */
  schedule(ms: number, fn: () => void): void {
    this.#insert({ at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve: fn });
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.#timers.length;
  }

  /** The time of the next pending timer, if any. */
  nextTimerAt(): number | undefined {
    return this.#timers[0]?.at;
  }

  /** Moves time forward by `ms`, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.#now + ms);
  }

  /** Moves time forward to `target`, firing every timer due on the way, in order. */
  async advanceTo(target: number): Promise<void> {
    await flushMicrotasks();
    while (this.#timers.length > 0 && this.#timers[0]!.at <= target) {
      const t = this.#timers.shift()!;
      this.#now = Math.max(this.#now, t.at);
      t.resolve();
      await flushMicrotasks();
    }
    this.#now = Math.max(this.#now, target);
  }

  /** Fires timers until none is left or `limitMs` of virtual time has passed. */
  async runUntilIdle(limitMs = Number.POSITIVE_INFINITY): Promise<void> {
    const stop = this.#now + limitMs;
    await flushMicrotasks();
    while (this.#timers.length > 0 && this.#timers[0]!.at <= stop) {
      await this.advanceTo(this.#timers[0]!.at);
    }
  }

  #insert(timer: Timer): void {
    const i = this.#timers.findIndex((t) =>
      t.at > timer.at || (t.at === timer.at && t.seq > timer.seq)
    );
    if (i === -1) this.#timers.push(timer);
    else this.#timers.splice(i, 0, timer);
  }
}

/** Lets pending promise callbacks run (several turns, since async chains take more than one). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
