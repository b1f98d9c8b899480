/**
 * Expected-noise silences as leases (docs/operating.md#alert-veto-and-silences): for the alerts a
 * plan declares as expected noise of a node step (CephOSDDownHigh while that node's OSDs are
 * down), one silence per declared entry is created when the step is committed, scoped to that node
 * (exactly the plan's matchers plus `nodeLabel=<node>`), recorded in the journal, renewed while
 * the step runs and expired when it ends.
 *
 * Why a lease: a silence as long as the whole step either lapses mid-step when the step runs long
 * (noise pages people) or, written long enough for the worst case, outlives a crashed controller
 * by hours (real faults hidden). So each silence ends `leaseMs` after its last renewal, and the
 * step renews it every `RENEW_EVERY_MS`: if cairn dies, the silence lapses by itself within one
 * lease. A renewal is Alertmanager's update by id, so a step never holds two live silences for one
 * entry, and it sends the plan's matchers again, never what Alertmanager echoed back.
 *
 * Renewals happen while the step waits: every sleep of the step's clock goes through
 * `leasedClock`, which cuts a long sleep at the renewal point. Sleeps are where a step's time
 * passes (drain passes, boot polls, verification rounds, hook Jobs); the rest is single calls,
 * each bounded by a transport deadline of the plan, and the lease is two renewal periods plus the
 * longest of those, so a step that spends a whole transport deadline in one call still finds its
 * silence live. Renewing from the step itself, not from a timer of its own, keeps virtual time
 * deterministic (a background sleeper would drive the twin's clock).
 *
 * A lease is never revived: a silence found expired or gone (its lease lapsed while Alertmanager
 * could not be reached, or a person expired it) stays so and the alerts page; and a renewal is
 * made only while the journal still shows this controller owning the step's operation, so a
 * deposed controller cannot resurrect a silence its successor expired (`releaseOrphanSilences`).
 *
 * A silence Alertmanager does not confirm is recorded (`SilenceNotCreated`, `SilenceNotRenewed`)
 * and the step goes on: noise that pages is safe, a step held for a missing silence is not needed.
 */
import {
  type Alertmanager,
  type AlertMatcher,
  CAIRN_SILENCE_AUTHOR,
} from "../../ports/alertmanager.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Journal } from "../../ports/journal.ts";
import type { RolloutEventEntry } from "../../ports/journal_history.ts";
import type { OperatedPlan, PhaseDeadline } from "../../domain/plan/schema.ts";
import type { StepState } from "../executor/deps.ts";
import { errorText } from "../executor/mutation.ts";
import { controllerActor } from "../executor/observe.ts";

/** Bound on one Alertmanager call (wall-clock ms, through the executor's conversion). */
const CALL_MS = 10_000;

/** How often a live silence is renewed while its step runs (step-clock ms). */
export const RENEW_EVERY_MS = 5 * 60_000;

/**
 * The lease a silence is written (and renewed) for: two renewal periods, so one missed renewal
 * (Alertmanager briefly unreachable) does not lapse it, plus the longest single call the plan
 * allows a phase, during which the step cannot renew.
 */
export function silenceLeaseMs(plan: OperatedPlan): number {
  const d: Readonly<Record<string, PhaseDeadline>> = plan.spec.phases.deadlines;
  const longestCallSeconds = Math.max(...Object.values(d).map((x) => x.transportSeconds));
  return 2 * RENEW_EVERY_MS + longestCallSeconds * 1000;
}

/** The silences opened for one step. */
export interface NoiseLease {
  /** Renews every live silence whose renewal is due; never throws. */
  renewIfDue(): Promise<void>;
  /** Expires the live silences (call once, when the step ends); never throws. */
  close(): Promise<void>;
}

const NONE: NoiseLease = { renewIfDue: () => Promise.resolve(), close: () => Promise.resolve() };

/** One live silence of the step: the id Alertmanager answered last and the start it holds. */
interface Live {
  readonly noise: string;
  id: string;
  readonly matchers: readonly AlertMatcher[];
  /** The start as Alertmanager holds it: an update by id must send it unchanged. */
  startsAtMs: number;
  endsAtMs: number;
}

/** `name=value`, `name!~re`: how matchers are recorded. */
function matcherText(m: AlertMatcher): string {
  return `${m.name}${m.isEqual ? "" : "!"}${m.isRegex ? "=~" : "="}${m.value}`;
}

/** Opens the step's expected-noise silences (none when the plan declares none). */
export async function openNoiseLease(
  s: StepState<OperatedPlan>,
  am: Alertmanager | undefined,
): Promise<NoiseLease> {
  const noise = s.bound.plan.spec.expectedNoise ?? [];
  if (noise.length === 0) return NONE;
  const leaseMs = silenceLeaseMs(s.bound.plan);
  const timeout = () => ({ timeoutMs: s.deps.callTimeoutMs(CALL_MS) });
  const live: Live[] = [];
  const now = s.deps.clock.now();
  const spec = (l: { matchers: readonly AlertMatcher[]; noise: string }, from: number) => ({
    matchers: l.matchers,
    startsAtMs: from,
    endsAtMs: s.deps.clock.now() + leaseMs,
    createdBy: `${CAIRN_SILENCE_AUTHOR}${s.deps.owner}`,
    comment: `expected noise ${l.noise} of plan ${s.bound.plan.metadata.name} on ${s.node} ` +
      `(operation ${s.operationId}; a lease of ${
        leaseMs / 60_000
      } min, renewed while the step runs)`,
  });
  for (const n of noise) {
    const matchers: AlertMatcher[] = [
      ...n.matchers.map((m) => ({
        name: m.name,
        value: m.value,
        isRegex: m.isRegex,
        isEqual: m.isEqual,
      })),
      { name: n.nodeLabel, value: s.node, isRegex: false, isEqual: true },
    ];
    if (!am) {
      await record(s, "silence-created", {
        reason: "SilenceNotCreated",
        noise: n.name,
        detail: "no Alertmanager is configured",
      });
      continue;
    }
    try {
      const sent = spec({ matchers, noise: n.name }, now);
      const id = await am.createSilence(sent, timeout());
      // Alertmanager moves a start already past to its own now, and updates in place only when
      // the start sent is the one it holds: each renewal reads it back first.
      const held = await am.getSilence(id, timeout()).catch(() => undefined);
      const l: Live = {
        noise: n.name,
        id,
        matchers,
        startsAtMs: held?.startsAtMs ?? sent.startsAtMs,
        endsAtMs: sent.endsAtMs,
      };
      live.push(l);
      await record(s, "silence-created", {
        noise: n.name,
        silence: id,
        operation: s.operationId,
        matchers: matchers.map(matcherText),
        startsAtMs: l.startsAtMs,
        endsAtMs: l.endsAtMs,
        leaseMs,
        at: am.describe(),
      });
    } catch (e) {
      await record(s, "silence-created", {
        reason: "SilenceNotCreated",
        noise: n.name,
        detail: errorText(e),
      });
    }
  }
  if (!am || live.length === 0) return NONE;
  let renewedAt = now;
  let closed = false;
  let running: Promise<void> | undefined;

  /** The journal still shows this controller owning the step's operation. */
  const stillOurs = async (): Promise<boolean> => {
    const op = await s.deps.journal.getOperation(s.operationId).catch(() => undefined);
    return op !== undefined && op.owner === s.token.owner && op.ownerGen === s.token.gen &&
      op.ownerEpoch === s.token.epoch;
  };

  const renew = async (): Promise<void> => {
    if (!(await stillOurs())) {
      // Another controller owns the step now: it expires the silence (`releaseOrphanSilences`);
      // renewing here could only revive what it ended.
      for (const l of live.splice(0)) {
        await record(s, "silence-renewed", {
          reason: "SilenceLeaseReleased",
          noise: l.noise,
          silence: l.id,
          operation: s.operationId,
          detail: "the step's operation is no longer this controller's: not renewed",
        });
      }
      return;
    }
    for (const l of [...live]) {
      try {
        const held = await am.getSilence(l.id, timeout());
        if (!held || held.state === "expired") {
          live.splice(live.indexOf(l), 1);
          await record(s, "silence-expired", {
            reason: "SilenceLapsed",
            noise: l.noise,
            silence: l.id,
            operation: s.operationId,
            detail: held
              ? `found expired at ${new Date(held.endsAtMs).toISOString()}; not revived`
              : "Alertmanager no longer holds it; not revived",
          });
          continue;
        }
        const next = spec(l, held.startsAtMs);
        const answered = await am.updateSilence(l.id, next, timeout());
        if (answered !== l.id) {
          // Alertmanager made a new silence: the one we renewed had ended between the read and
          // the update (expired by a successor, or lapsed). A lease is never revived, so the new
          // one is expired at once and the step goes on unsilenced.
          live.splice(live.indexOf(l), 1);
          await expire(s, am, l.noise, answered, s.operationId, "SilenceLapsed");
          continue;
        }
        l.startsAtMs = held.startsAtMs;
        l.endsAtMs = next.endsAtMs;
        await record(s, "silence-renewed", {
          noise: l.noise,
          silence: answered,
          operation: s.operationId,
          endsAtMs: l.endsAtMs,
        });
      } catch (e) {
        await record(s, "silence-renewed", {
          reason: "SilenceNotRenewed",
          noise: l.noise,
          silence: l.id,
          operation: s.operationId,
          detail: `${errorText(e)}; it lapses at ${new Date(l.endsAtMs).toISOString()} ` +
            "unless a later renewal succeeds",
        });
      }
    }
  };

  return {
    renewIfDue(): Promise<void> {
      if (closed || live.length === 0) return Promise.resolve();
      if (running) return running;
      if (s.deps.clock.now() < renewedAt + RENEW_EVERY_MS) return Promise.resolve();
      renewedAt = s.deps.clock.now();
      const r = renew().catch(() => {}).finally(() => {
        running = undefined;
      });
      running = r;
      return r;
    },
    async close() {
      if (closed) return;
      closed = true;
      await running;
      for (const l of live.splice(0)) {
        await expire(s, am, l.noise, l.id, s.operationId, undefined);
      }
    },
  };
}

/**
 * The step's clock with the lease in it: a sleep renews what is due before it starts and at each
 * renewal point it passes, then sleeps on. The time slept in total is the time asked for.
 */
export function leasedClock(clock: Clock, lease: NoiseLease): Clock {
  if (lease === NONE) return clock;
  return {
    now: () => clock.now(),
    async sleep(ms, signal) {
      const end = clock.now() + Math.max(0, ms);
      while (true) {
        await lease.renewIfDue();
        if (signal?.aborted) throw signal.reason;
        const left = end - clock.now();
        if (left <= 0) return;
        await clock.sleep(Math.min(left, RENEW_EVERY_MS), signal);
      }
    },
  };
}

/**
 * After a restart or a takeover no step of the plan is running in this process, and a step is
 * never resumed from the middle (docs/recovery.md#resume-is-not-rerun): every silence the journal
 * shows opened for the plan and not yet expired is expired now, by its recorded id, never created
 * anew. Called before the rollout's first node.
 */
export async function releaseOrphanSilences(
  deps: {
    readonly journal: Journal;
    readonly clock: Clock;
    readonly owner: string;
    readonly callTimeoutMs: (ms: number) => number;
  },
  planDigest: string,
  am: Alertmanager | undefined,
): Promise<void> {
  const events = (await deps.journal.planHistory(planDigest))?.rolloutEvents ?? [];
  const open = openSilences(events);
  if (open.length === 0) return;
  const s = { deps, bound: { digest: planDigest } };
  for (const o of open) {
    if (!am) {
      await recordFor(s, o.node, "silence-expired", {
        reason: "SilenceLeaseReleased",
        noise: o.noise,
        silence: o.id,
        operation: o.operation,
        detail: "no Alertmanager is configured now; it lapses at the end of its lease",
      });
      continue;
    }
    await expire({ ...s, node: o.node }, am, o.noise, o.id, o.operation, "SilenceLeaseReleased");
  }
}

/** A silence the journal shows live: created or renewed, neither expired nor released since. */
export interface OpenSilence {
  readonly node: string | null;
  readonly noise: string;
  readonly id: string;
  readonly operation: string;
}

/** The silences of a plan's rollout events still open (in event order). */
export function openSilences(events: readonly RolloutEventEntry[]): OpenSilence[] {
  const open = new Map<string, OpenSilence>();
  for (const e of events) {
    const d = e.detail;
    const id = typeof d["silence"] === "string" ? d["silence"] : undefined;
    if (!id) continue;
    const key = `${e.node}\u0000${String(d["noise"])}`;
    if (e.kind === "silence-created" && d["reason"] === undefined) {
      open.set(key, {
        node: e.node,
        noise: String(d["noise"]),
        id,
        operation: String(d["operation"] ?? ""),
      });
    } else if (e.kind === "silence-renewed" && d["reason"] === undefined) {
      const prev = open.get(key);
      if (prev) open.set(key, { ...prev, id });
    } else if (e.kind === "silence-expired") {
      // Only an expiry ends it: a deposed controller's "not renewed" leaves it for its successor.
      open.delete(key);
    }
  }
  return [...open.values()];
}

async function expire(
  s: Recorder & { readonly node: string | null },
  am: Alertmanager,
  noise: string,
  id: string,
  operation: string,
  reason: "SilenceLeaseReleased" | "SilenceLapsed" | undefined,
): Promise<void> {
  try {
    await am.expireSilence(id, { timeoutMs: s.deps.callTimeoutMs(CALL_MS) });
    await record(s, "silence-expired", {
      ...(reason ? { reason } : {}),
      noise,
      silence: id,
      operation,
    });
  } catch (e) {
    // It still lapses at its end: the lease bounds it whatever happens here.
    await record(s, "silence-expired", {
      reason: "AlertmanagerUnreadable",
      noise,
      silence: id,
      operation,
      detail: `not confirmed expired (${errorText(e)}); it lapses on its own at its lease's end`,
    });
  }
}

type Recorder = {
  readonly deps: Pick<StepState["deps"], "journal" | "clock" | "owner" | "callTimeoutMs">;
  readonly bound: { readonly digest: string };
};

async function record(
  s: Recorder & { readonly node: string | null },
  kind: "silence-created" | "silence-renewed" | "silence-expired",
  detail: Record<string, unknown>,
): Promise<void> {
  await recordFor(s, s.node, kind, detail);
}

async function recordFor(
  s: Recorder,
  node: string | null,
  kind: "silence-created" | "silence-renewed" | "silence-expired",
  detail: Record<string, unknown>,
): Promise<void> {
  await s.deps.journal.recordRolloutEvent({
    planDigest: s.bound.digest,
    node,
    kind,
    detail,
    actor: controllerActor(s.deps.owner),
    nowMs: s.deps.clock.now(),
  });
}
