/**
 * Runs the election (`election.ts`) against a Lease through the `LeaseStore` port, one round
 * every retry period on the injected clock. Each stretch of leadership is a **term** with its
 * own AbortSignal: the term ends (its signal aborts) as soon as a round finds that this replica
 * no longer leads, so executions started in it stop between steps. The journal's fencing, not
 * this signal, is what keeps a deposed leader from sending (see election.ts).
 */
import type { Clock } from "../../ports/clock.ts";
import type { LeaseStore, LeaseWrite } from "../../ports/lease.ts";
import type { Logger } from "../../ports/logger.ts";
import {
  afterRelease,
  afterWrite,
  type ElectionConfig,
  type ElectionState,
  INITIAL_ELECTION,
  isLeader,
  nextAction,
  observe,
  releaseAction,
} from "./election.ts";

/** What `/readyz` and the loop are told about this replica's part. */
export interface LeadershipStatus {
  readonly role: "leader" | "standby";
  /** The Lease's holder as last seen ("" when released, absent when never read). */
  readonly holder?: string;
  /** Why a standby is not leading (a holder, an unreachable Lease). */
  readonly why?: string;
}

/** What the reconcile loop asks of leadership. */
export interface Leadership {
  /** The current term's signal while this replica leads, undefined while it does not. */
  term(): AbortSignal | undefined;
  status(): LeadershipStatus;
  /** Hands the Lease over now (a node hosting this replica is about to be drained). */
  release(why: string): Promise<boolean>;
}

/** A single replica with no election: always the leader, one term for the whole run. */
export function soleLeader(): Leadership {
  const term = new AbortController();
  return {
    term: () => term.signal,
    status: () => ({ role: "leader" }),
    release: () => Promise.resolve(false),
  };
}

export interface ElectorOptions {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly config: ElectionConfig;
  readonly log: Logger;
  /** Told when a term starts or ends (the loop wakes up to act on it). */
  readonly onChange?: (status: LeadershipStatus) => void;
}

/** The election loop of one replica. */
export class LeaderElector implements Leadership {
  readonly #o: ElectorOptions;
  #state: ElectionState = INITIAL_ELECTION;
  #term: AbortController | undefined;
  #why = "no election round yet";
  /** Rounds are serial: a release never interleaves with a renewal. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(o: ElectorOptions) {
    this.#o = o;
  }

  term(): AbortSignal | undefined {
    this.#sync();
    return this.#term?.signal;
  }

  status(): LeadershipStatus {
    const leading = this.term() !== undefined;
    const holder = this.#state.observed?.lease.spec.holderIdentity;
    return {
      role: leading ? "leader" : "standby",
      ...(holder !== undefined ? { holder } : {}),
      ...(leading ? {} : { why: this.#why }),
    };
  }

  /** One round: read the Lease, then create, renew, take over or wait. Never throws. */
  round(): Promise<void> {
    return this.#serial(() => this.#round());
  }

  async #round(): Promise<void> {
    const { store, clock, config } = this.#o;
    const timeout = { timeoutMs: config.retryPeriodMs };
    try {
      this.#state = observe(this.#state, await store.get(timeout), clock.now());
      const action = nextAction(this.#state, clock.now(), config);
      if (action.kind === "wait") {
        this.#why = action.holder === ""
          ? `the Lease ${store.where} was handed over; standing down`
          : `the Lease ${store.where} is held by ${action.holder}`;
      } else {
        const result: LeaseWrite = action.kind === "create"
          ? await store.create(action.spec, timeout)
          : await store.update(action.spec, action.resourceVersion, timeout);
        this.#state = afterWrite(this.#state, result, clock.now(), config);
        if (result.kind === "conflict") this.#why = `lost a write race on ${store.where}`;
      }
    } catch (e) {
      // An unreachable Lease changes nothing: leadership runs out at the renew deadline.
      this.#why = `the Lease ${store.where} is unreadable: ${messageOf(e)}`;
      this.#o.log.warn("leader election round failed", {
        reason: reasonOf(e),
        error: messageOf(e),
      });
    }
    this.#sync();
  }

  /** Rounds every retry period until `signal`; then hands the Lease over if it holds it. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.round();
      try {
        await this.#o.clock.sleep(this.#o.config.retryPeriodMs, signal);
      } catch {
        break;
      }
    }
    await this.release("stopping");
  }

  release(why: string): Promise<boolean> {
    return this.#serial(async () => {
      const { store, clock, config } = this.#o;
      const r = releaseAction(this.#state, clock.now(), config);
      let released = false;
      if (r) {
        try {
          const result = await store.update(r.spec, r.resourceVersion, {
            timeoutMs: config.retryPeriodMs,
          });
          released = result.kind === "written";
          this.#state = afterRelease(this.#state, result, clock.now(), config);
        } catch (e) {
          // Not written: the Lease expires by itself; this replica stops leading either way.
          this.#state = afterRelease(
            this.#state,
            { kind: "conflict", message: "" },
            clock.now(),
            config,
          );
          this.#o.log.warn("lease release failed", { reason: reasonOf(e), error: messageOf(e) });
        }
        this.#why = `handed the Lease over (${why})`;
        this.#o.log.info(released ? "leadership released" : "leadership dropped", {
          lease: store.where,
          reason: why,
        });
      }
      this.#sync();
      return released;
    });
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(f);
    this.#chain = next.catch(() => {});
    return next;
  }

  /** Starts or ends the term to match the state at this instant. */
  #sync(): void {
    const { clock, config, store, log } = this.#o;
    const leading = isLeader(this.#state, clock.now(), config);
    if (leading && !this.#term) {
      this.#term = new AbortController();
      const spec = this.#state.observed?.lease.spec;
      log.info("leadership acquired", {
        lease: store.where,
        identity: config.identity,
        ...(spec ? { count: spec.leaseTransitions } : {}),
      });
      this.#o.onChange?.({ role: "leader", holder: config.identity });
    } else if (!leading && this.#term) {
      this.#term.abort(new Error("leadership lost"));
      this.#term = undefined;
      log.warn("leadership lost", { lease: store.where, identity: config.identity });
      this.#o.onChange?.({ role: "standby", why: this.#why });
    }
  }
}

function reasonOf(e: unknown): string {
  const r = (e as { reason?: unknown })?.reason;
  return typeof r === "string" ? r : "Internal";
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
