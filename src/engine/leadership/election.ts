/**
 * Leader election over one Lease, as a pure state machine (no I/O, no clock: `nowMs` comes in).
 * The semantics are client-go's leader election, which a Kubernetes operator expects:
 *
 * - A Lease's expiry is judged on this replica's own clock from when it last saw the Lease
 *   *change* (its resourceVersion), never from the `renewTime` written by another machine, so a
 *   skewed clock elsewhere cannot make a live leader look dead.
 * - A released Lease (empty holder) may be taken at once; a held one only after it went
 *   unchanged for its whole `leaseDurationSeconds`.
 * - This replica leads only while its own last successful write is younger than the renew
 *   deadline (shorter than the lease duration), so it stops acting before anyone else may start.
 *
 * The Lease alone never authorises a send: the journal's owner/generation/epoch fencing does
 * (docs/operation-model.md#fencing). A paused leader that still believes it leads is refused by
 * the journal, because the new leader's takeover moved the operation's generation on.
 */
import type { LeaseSpec, LeaseWrite, ObservedLease } from "../../ports/lease.ts";

/** How this replica runs the election. */
export interface ElectionConfig {
  /** Unique per process (pod name plus a random suffix): a restart is a new candidate. */
  readonly identity: string;
  /** How long a held Lease must stay unchanged before another replica may take it. */
  readonly leaseDurationMs: number;
  /** The leader stops leading when it could not renew for this long (< leaseDurationMs). */
  readonly renewDeadlineMs: number;
  /** Time between two rounds (< renewDeadlineMs). */
  readonly retryPeriodMs: number;
}

/** What the election remembers between rounds. */
export interface ElectionState {
  /** The Lease as last read or written, and when (this replica's clock) it last changed. */
  readonly observed?: {
    readonly lease: ObservedLease;
    readonly changedAtMs: number;
  };
  /** When this replica's last acquire or renew was written. */
  readonly renewedAtMs?: number;
  /**
   * After a hand-over this replica does not take the Lease back before this time: the point of
   * releasing is that another replica leads (the old leader's node is about to be drained).
   */
  readonly standDownUntilMs?: number;
}

export const INITIAL_ELECTION: ElectionState = {};

/** The write one round asks for, or why it waits. */
export type ElectionAction =
  | { readonly kind: "create"; readonly spec: LeaseSpec }
  | { readonly kind: "update"; readonly spec: LeaseSpec; readonly resourceVersion: string }
  | {
    readonly kind: "wait";
    /** The other holder. */
    readonly holder: string;
    /** When (this replica's clock) the Lease may be taken if it stays unchanged. */
    readonly takeableAtMs: number;
  };

/** Checks the configuration's ordering, which the safety argument depends on. */
export function checkElectionConfig(c: ElectionConfig): string | undefined {
  if (c.identity.trim() === "") return "the election identity is empty";
  if (!(c.retryPeriodMs > 0)) return "retryPeriod must be positive";
  if (!(c.renewDeadlineMs > c.retryPeriodMs)) return "renewDeadline must exceed retryPeriod";
  if (!(c.leaseDurationMs > c.renewDeadlineMs)) return "leaseDuration must exceed renewDeadline";
  if (c.leaseDurationMs % 1000 !== 0) return "leaseDuration must be whole seconds";
  return undefined;
}

/** Records a read: the change time moves only when the Lease's version moved. */
export function observe(
  s: ElectionState,
  lease: ObservedLease | undefined,
  nowMs: number,
): ElectionState {
  if (!lease) {
    const { observed: _gone, ...rest } = s;
    return rest;
  }
  const same = s.observed?.lease.resourceVersion === lease.resourceVersion;
  return { ...s, observed: { lease, changedAtMs: same ? s.observed!.changedAtMs : nowMs } };
}

/** The round's decision on what was just observed. */
export function nextAction(s: ElectionState, nowMs: number, c: ElectionConfig): ElectionAction {
  const o = s.observed;
  if (!o) return { kind: "create", spec: acquired(undefined, nowMs, c) };
  const held = o.lease.spec.holderIdentity ?? "";
  if (held === c.identity) {
    // Renewal keeps the acquire time and the transition count.
    return {
      kind: "update",
      resourceVersion: o.lease.resourceVersion,
      spec: { ...o.lease.spec, leaseDurationSeconds: c.leaseDurationMs / 1000, renewTimeMs: nowMs },
    };
  }
  const free = held === ""
    ? o.changedAtMs
    : o.changedAtMs + o.lease.spec.leaseDurationSeconds * 1000;
  const takeableAtMs = Math.max(free, s.standDownUntilMs ?? free);
  if (nowMs < takeableAtMs) return { kind: "wait", holder: held, takeableAtMs };
  return {
    kind: "update",
    resourceVersion: o.lease.resourceVersion,
    spec: acquired(o.lease.spec, nowMs, c),
  };
}

function acquired(prev: LeaseSpec | undefined, nowMs: number, c: ElectionConfig): LeaseSpec {
  return {
    holderIdentity: c.identity,
    leaseDurationSeconds: c.leaseDurationMs / 1000,
    acquireTimeMs: nowMs,
    renewTimeMs: nowMs,
    // Every change of holder counts, as client-go counts it (a release included).
    leaseTransitions: (prev?.leaseTransitions ?? 0) + (prev ? 1 : 0),
  };
}

/** Records a write's result: a written Lease is this replica's renewal, a conflict is nothing. */
export function afterWrite(
  s: ElectionState,
  result: LeaseWrite,
  nowMs: number,
  c: ElectionConfig,
): ElectionState {
  if (result.kind === "conflict") return s;
  const next = observe(s, result.lease, nowMs);
  return (result.lease.spec.holderIdentity ?? "") === c.identity
    ? { ...next, renewedAtMs: nowMs }
    : withoutRenewal(next);
}

function withoutRenewal(s: ElectionState): ElectionState {
  const { renewedAtMs: _r, ...rest } = s;
  return rest;
}

/**
 * True while this replica leads: the Lease as last seen names it and its last renewal is
 * younger than the renew deadline. A round that could not reach the Lease changes nothing, so
 * leadership runs out by itself when renewals stop.
 */
export function isLeader(s: ElectionState, nowMs: number, c: ElectionConfig): boolean {
  if (s.renewedAtMs === undefined) return false;
  if ((s.observed?.lease.spec.holderIdentity ?? "") !== c.identity) return false;
  return nowMs >= s.renewedAtMs && nowMs - s.renewedAtMs < c.renewDeadlineMs;
}

/**
 * The write that hands the Lease over (a clean stop, a node about to be drained): holder
 * cleared, so a standby takes it at its next round instead of waiting out the duration. Only
 * the holder releases; undefined when this replica does not hold it.
 */
export function releaseAction(
  s: ElectionState,
  nowMs: number,
  c: ElectionConfig,
): { readonly spec: LeaseSpec; readonly resourceVersion: string } | undefined {
  const o = s.observed;
  if (!o || (o.lease.spec.holderIdentity ?? "") !== c.identity) return undefined;
  return {
    resourceVersion: o.lease.resourceVersion,
    spec: {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTimeMs: nowMs,
      renewTimeMs: nowMs,
      leaseTransitions: o.lease.spec.leaseTransitions,
    },
  };
}

/** After a release was written: not leading, the released Lease observed. */
export function afterRelease(
  s: ElectionState,
  result: LeaseWrite,
  nowMs: number,
  c: ElectionConfig,
): ElectionState {
  const next = withoutRenewal(result.kind === "written" ? observe(s, result.lease, nowMs) : s);
  return { ...next, standDownUntilMs: nowMs + c.leaseDurationMs };
}
