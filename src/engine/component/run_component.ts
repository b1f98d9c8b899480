/**
 * Running a ComponentUpgrade plan (docs/plans.md#plan-kinds): cairn does not mutate the component, Flux delivers
 * the merge; cairn binds the plan, re-runs every authorising check on current evidence (the
 * dispatch check, and the bump's pin files held to the digests the plan binds), observes the
 * delivery (`observe_delivery.ts`), then runs the bound health policy's checks in bounded fresh
 * rounds until one passes or the deadline, and reads the delivery once more before `completed`
 * (one that went back meanwhile is observed again until the deadline). Every round is journaled.
 * Pure orchestration over ports.
 */
import type {
  AfterMergeRound,
  ComponentEnd,
  ComponentOutcome,
} from "../../domain/component/outcome.ts";
import {
  type DeliveryState,
  deliveryState,
  judgeDelivery,
} from "../../domain/component/delivery.ts";
import type { DeliveryOutcome } from "../../domain/component/outcome.ts";
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import { journalRows } from "../../domain/health/round.ts";
import type { HealthEvidence } from "../../domain/health/types.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type { ComponentUpgradePlan } from "../../domain/plan/schema.ts";
import type { Clock } from "../../ports/clock.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { Journal } from "../../ports/journal.ts";
import { collectRound } from "../health_round.ts";
import { authorizeRollout, type DispatchAuthority } from "../executor/dispatch_gate.ts";
import { journalInEpoch } from "../executor/journal_in_epoch.ts";
import { type BindInputs, planOfKind, recordApprovedPlan } from "../executor/run_plan.ts";
import { observeDelivery, type ObserveDeps, readDelivery } from "./observe_delivery.ts";

/** Refuses anything but a ComponentUpgrade. */
export function asComponentUpgrade(parsed: ParsedPlan): ComponentUpgradePlan {
  return planOfKind(parsed, "ComponentUpgrade", "are not run by the ComponentUpgrade observer");
}

/** Records the plan (no machine steps: nothing is mutated) and its approval. */
export async function bindComponentUpgrade(
  journal: Journal,
  o: BindInputs,
): Promise<{ plan: ComponentUpgradePlan; digest: string }> {
  const plan = asComponentUpgrade(o.parsed);
  return await recordApprovedPlan(journal, o, plan, {
    maxAttempts: plan.spec.retry.maxAttempts,
    steps: [],
  });
}

export type {
  AfterMergeRound,
  ComponentEnd,
  ComponentOutcome,
} from "../../domain/component/outcome.ts";

/** The shortest after-merge round worth starting before the deadline. */
const MIN_ROUND_MS = 10_000;

export interface RunComponentOptions {
  readonly journal: Journal;
  readonly plan: ComponentUpgradePlan;
  readonly digest: string;
  readonly owner: string;
  readonly authority: DispatchAuthority;
  readonly files: BoundFileSource;
  readonly observe: Omit<ObserveDeps, "signal">;
  /** Health evidence over the cluster (watch caches, Talos reads, proxy routes). */
  readonly evidence: HealthEvidence;
  /** Clock for read timeouts inside rounds (default `observe.clock`). */
  readonly timeoutClock?: Clock;
  readonly roundIntervalMs: number;
  readonly signal?: AbortSignal;
  /**
   * The epoch the controller started in: one fenced by a recovery entry or a journal restore
   * records no dispatch check and no round (`EpochSuperseded`).
   */
  readonly epoch?: string;
}

/** Runs the plan: authorise, observe the delivery, then the after-merge rounds. */
export async function runComponentUpgrade(run: RunComponentOptions): Promise<ComponentOutcome> {
  // Its checks and rounds carry the epoch the controller started in (journal_in_epoch.ts).
  const o = { ...run, journal: journalInEpoch(run.journal, run.epoch) };
  const auth = await authorizeRollout(o.journal, o.owner, o.digest, o.authority);
  if (!auth.ok) {
    return { end: "refused", refusal: auth.stop, rounds: [], pins: [] };
  }
  const pins = await checkPins(o.plan, o.files);
  const bad = pins.find((p) => !p.ok);
  if (bad) {
    return {
      end: "refused",
      refusal: {
        reason: "ComponentPinDigestMismatch",
        detail: `pin file "${bad.path}" is not the reviewed bytes: ${bad.detail}`,
      },
      rounds: [],
      pins: pins.map(({ path, sha256, ok }) => ({ path, sha256, ok })),
    };
  }
  const clock = o.observe.clock;
  const deadlineMs = clock.now() + o.plan.spec.phases.deadlines.rollout.verificationSeconds * 1000;
  const deps = { ...o.observe, ...(o.signal ? { signal: o.signal } : {}) };
  const pinRows = pins.map(({ path, sha256, ok }) => ({ path, sha256, ok }));
  const rounds: AfterMergeRound[] = [];
  let earlier: DeliveryOutcome | undefined;
  for (;;) {
    const delivery = joined(earlier, await observeDelivery(o.plan, deps, deadlineMs));
    if (delivery.state !== "landed") {
      return { end: deliveryEnd(delivery.state), delivery, rounds, pins: pinRows };
    }
    const mine = await afterMergeRounds(o, auth.policy, deadlineMs);
    rounds.push(...mine);
    const last = mine.at(-1)?.outcome;
    if (last?.verdict !== "pass") {
      const end: ComponentEnd = last?.verdict === "fail" ? "health-failed" : "unresolved";
      return { end, delivery, rounds, pins: pinRows };
    }
    // The delivery is read again right before `completed`: one that went back since it was seen
    // landed (the Kustomization not Ready or at another revision, the release rolled back) is no
    // completion, however well the rounds went (issue 16, invariant 12).
    const again = await recheck(o.plan, deps, deadlineMs, delivery);
    if (again.state === "landed" || clock.now() >= deadlineMs - o.observe.pollIntervalMs) {
      return again.state === "landed"
        ? { end: "completed", delivery: again, rounds, pins: pinRows }
        : { end: deliveryEnd(again.state), delivery: again, rounds, pins: pinRows };
    }
    earlier = again;
  }
}

/** One more pass over the delivery, appended to what was observed (the landing kept). */
async function recheck(
  plan: ComponentUpgradePlan,
  deps: ObserveDeps,
  deadlineMs: number,
  delivery: DeliveryOutcome,
): Promise<DeliveryOutcome> {
  const reading = await readDelivery(plan, deps, deadlineMs);
  const checks = judgeDelivery(plan, reading);
  const state = deliveryState(checks);
  const last = new Map(delivery.checks.map((c) => [c.id, `${c.verdict}|${c.detail}`]));
  const moved = checks.filter((c) => last.get(c.id) !== `${c.verdict}|${c.detail}`)
    .map((check) => ({ atMs: reading.atMs, check }));
  const { landedAtMs: _, ...rest } = delivery;
  return {
    ...rest,
    state,
    checks,
    observations: [...delivery.observations, ...moved],
    passes: delivery.passes + 1,
    endedAtMs: deps.clock.now(),
    ...(state === "landed" ? { landedAtMs: delivery.landedAtMs ?? reading.atMs } : {}),
    last: reading,
  };
}

/** A later observation after an earlier one that went back: one record of both. */
function joined(earlier: DeliveryOutcome | undefined, later: DeliveryOutcome): DeliveryOutcome {
  if (!earlier) return later;
  return {
    ...later,
    observations: [...earlier.observations, ...later.observations],
    passes: earlier.passes + later.passes,
    startedAtMs: earlier.startedAtMs,
  };
}

function deliveryEnd(s: DeliveryState): ComponentEnd {
  return s === "not-landed" ? "not-landed" : s === "not-delivered" ? "not-delivered" : "unresolved";
}

/**
 * Bounded fresh rounds of the bound policy until one passes or the deadline: a pass before the
 * delivery landed never counts (rounds start only after it), and each round reads everything
 * again (an earlier pass masks nothing).
 */
async function afterMergeRounds(
  o: RunComponentOptions,
  policy: HealthPolicy,
  deadlineMs: number,
): Promise<AfterMergeRound[]> {
  const clock = o.observe.clock;
  const rounds: AfterMergeRound[] = [];
  for (;;) {
    // A round never outlives the deadline: its collection interval is the time left at most.
    const intervalMs = Math.max(1, Math.min(o.roundIntervalMs, deadlineMs - clock.now()));
    const outcome = await collectRound(
      { clock: o.timeoutClock ?? clock, evidence: o.evidence },
      policy,
      { intervalMs, ...(o.signal ? { signal: o.signal } : {}) },
    );
    const roundId = await o.journal.recordHealthRound({
      cluster: o.plan.metadata.cluster,
      purpose: "verify",
      startedAtMs: outcome.window.startedAtMs,
      finishedAtMs: clock.now(),
      results: journalRows(outcome),
    });
    rounds.push({ roundId, outcome });
    const remaining = deadlineMs - clock.now();
    // Another round needs time to read; one squeezed against the deadline proves nothing more.
    if (outcome.verdict === "pass" || remaining <= MIN_ROUND_MS || o.signal?.aborted) return rounds;
    await clock.sleep(Math.min(o.roundIntervalMs, remaining - MIN_ROUND_MS), o.signal);
  }
}

/** Each pin file the plan binds, read now and compared with its bound digest. */
async function checkPins(
  plan: ComponentUpgradePlan,
  files: BoundFileSource,
): Promise<{ path: string; sha256: string; ok: boolean; detail: string }[]> {
  const out = [];
  for (const pin of plan.spec.change?.pins ?? []) {
    const r = await files.read(pin.path);
    if (r.status !== "read") {
      out.push({ path: pin.path, sha256: "", ok: false, detail: r.detail });
      continue;
    }
    const sha = await sha256Hex(r.bytes);
    out.push({
      path: pin.path,
      sha256: sha,
      ok: sha === pin.sha256,
      detail: sha === pin.sha256 ? "matches" : `digest ${sha}, the plan binds ${pin.sha256}`,
    });
  }
  return out;
}
