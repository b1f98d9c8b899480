/**
 * Talos reads answered from an earlier answer (`stale-read`) and server streams that skip
 * messages (`stream-skips-events`), shared by the socket twin's handlers (`server.ts`) and the
 * in-process port (`../inproc/talos.ts`).
 *
 * Talos has no read cache of its own: apid proxies each call to machined. What lags in the field
 * sits in front of it (a proxy or management plane answering from what it last heard, a
 * load-balanced endpoint whose replica lags), or behind a resource's controller. The twin models
 * the client's view: each machine's answers to one question are remembered, newest last, and a
 * stale read hands back the answer given `lag` reads earlier instead of the fresh one. A stale
 * answer is always one the machine really gave, so it can only be older, never invented.
 */
import type { FaultSchedule } from "../faults.ts";

/** How many earlier answers are kept per machine and question (the largest `lag` served). */
const KEPT = 8;

export class StaleReads {
  readonly #answers = new Map<string, unknown[]>();
  readonly #reads = new Map<string, number>();

  constructor(
    private readonly faults: FaultSchedule,
    private readonly clock: { now(): number },
  ) {}

  /**
   * What the client hears when `node` answers `fresh` at `point` to the question `key` (a COSI
   * resource's type and id; empty for a call that takes none). `type` is what a fault's
   * `params.type` is matched against (a COSI resource type).
   */
  answer<T>(point: string, node: string, key: string, fresh: T, type?: string): T {
    const k = `${point}\u0000${node}\u0000${key}`;
    const kept = this.#answers.get(k) ?? [];
    kept.push(fresh);
    if (kept.length > KEPT) kept.shift();
    this.#answers.set(k, kept);
    const reads = (this.#reads.get(k) ?? 0) + 1;
    this.#reads.set(k, reads);
    const f = this.faults.peekKind("stale-read", point, node);
    if (!f) return fresh;
    const want = f.params?.["type"];
    if (want !== undefined && want !== type) return fresh;
    const every = Math.max(1, Number(f.params?.["every"] ?? 1));
    if (reads % every !== 0) return fresh;
    const lag = Math.min(KEPT - 1, Math.max(1, Number(f.params?.["lag"] ?? 1)));
    const old = kept[kept.length - 1 - lag];
    // Only an answer that differs counts as a firing: the same answer again is not stale.
    if (old === undefined || JSON.stringify(old) === JSON.stringify(fresh)) return fresh;
    this.faults.takeKind("stale-read", point, node, this.clock.now());
    return structuredClone(old) as T;
  }

  /**
   * For a server stream starting at `point` to `node`: which of its messages (0-based) it skips,
   * or undefined when it skips none. A stream takes one firing of the fault, at its start.
   */
  skipper(point: string, node: string): ((index: number) => boolean) | undefined {
    const f = this.faults.takeKind("stream-skips-events", point, node, this.clock.now());
    if (!f) return undefined;
    const every = Math.max(1, Number(f.params?.["every"] ?? 1));
    return (index) => (index + 1) % every === 0;
  }
}
