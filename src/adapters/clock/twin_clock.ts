import type { Clock } from "../../ports/clock.ts";

/**
 * The twin's virtual clock, seen from another process (`cairn rehearse`, the demo, scenario
 * tests). Time moves only when someone asks: `sleep(ms)` asks the twin to advance by `ms`
 * (firing its timers: reboots finishing, pods terminating), and the twin's own handlers may move
 * it while they work (an install takes its virtual duration). `sync()` re-reads the twin's time
 * after such calls; `now()` answers from the last reading, so it is cheap and monotonic.
 */
/** Real-time bound on one control call. */
const CONTROL_TIMEOUT_MS = 60_000;

export class TwinClock implements Clock {
  readonly #url: string;
  #now: number;

  private constructor(url: string, nowMs: number) {
    this.#url = url;
    this.#now = nowMs;
  }

  /** Connects to a twin control endpoint and reads its current virtual time. */
  static async connect(controlUrl: string): Promise<TwinClock> {
    const c = new TwinClock(controlUrl, 0);
    await c.sync();
    return c;
  }

  now(): number {
    return this.#now;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    // A twin that stops answering must fail the caller, not hang it.
    const bound = AbortSignal.timeout(CONTROL_TIMEOUT_MS);
    const res = await fetch(`${this.#url}/advance`, {
      method: "POST",
      body: JSON.stringify({ ms: Math.max(0, Math.round(ms)) }),
      signal: signal ? AbortSignal.any([signal, bound]) : bound,
    });
    this.#now = Math.max(this.#now, await readNow(res));
  }

  /**
   * A view for timeouts: the same virtual `now()`, but `sleep` waits real time (at most `capMs`)
   * without moving the twin. A timeout raced against a read must not advance the cluster's time
   * (that would let a reboot finish because a read was slow); only waits do.
   */
  forTimeouts(capMs: number): Clock {
    return {
      now: () => this.#now,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const t = setTimeout(resolve, Math.min(Math.max(0, ms), capMs));
          signal?.addEventListener("abort", () => {
            clearTimeout(t);
            reject(signal.reason);
          }, { once: true });
        }),
    };
  }

  /** The reading under way, and the one queued behind it (see {@link TwinClock.sync}). */
  #reading: Promise<number> | undefined;
  #queued: Promise<number> | undefined;

  /**
   * Re-reads the twin's time (after calls whose handlers moved it). The reading is taken after
   * the call: a reading already under way may have left before the caller's call ended, so the
   * caller waits for one more that starts after it; every caller arriving meanwhile shares that
   * one (a health round's hundred concurrent reads then cost two readings, not a hundred).
   */
  sync(): Promise<number> {
    if (!this.#reading) return this.#read();
    return this.#queued ??= this.#reading.catch(() => {}).then(() => {
      this.#queued = undefined;
      return this.#read();
    });
  }

  #read(): Promise<number> {
    const reading = this.#readOnce().finally(() => {
      if (this.#reading === reading) this.#reading = undefined;
    });
    this.#reading = reading;
    return reading;
  }

  async #readOnce(): Promise<number> {
    // `/now` carries the time alone (`/state` lists every node: a parse per call that grew with
    // the cluster).
    const read = () =>
      fetch(`${this.#url}/now`, { signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS) });
    // Reading the time is idempotent: a request lost with a pooled connection the server was
    // closing is asked once more, so a clock reading never fails the port call it follows.
    const res = await read().catch((e) => {
      if (e instanceof TypeError) return read();
      throw e;
    });
    this.#now = Math.max(this.#now, await readNow(res));
    return this.#now;
  }
}

async function readNow(res: Response): Promise<number> {
  const body = await res.json() as { nowMs?: unknown; error?: unknown };
  if (!res.ok || typeof body.nowMs !== "number") {
    throw new Error(`twin control answered ${res.status}: ${String(body.error ?? "no time")}`);
  }
  return body.nowMs;
}

/**
 * Wraps a port so that the clock re-reads the twin's time after every call. Calls are awaited
 * as they are; only the clock reading is added.
 */
export function syncingPort<T extends object>(port: T, clock: TwinClock): T {
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function" || prop === "close") return v;
      return async (...args: unknown[]) => {
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          await clock.sync();
        }
      };
    },
  });
}
