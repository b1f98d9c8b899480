import type { KubePod } from "../../ports/kube.ts";
import { type DrainPlan, planDrain } from "../drain_plan.ts";
import type { StepState } from "./deps.ts";
import { type DisruptingPlan, disruptionBounds } from "./disruption.ts";

/** A step that may take its node out of service (TalosUpgrade, ConfigApply with a reboot). */
type Step = StepState<DisruptingPlan>;
import { halt, type PhaseResult, proceed, unresolved } from "./halt.ts";
import { podKey as key, runDrain } from "../drain_run.ts";
import { errorText, mutate, type Sent } from "./mutation.ts";
import { pdbOfRefusal, stallAfterMs, StallWatch } from "../operating/stall.ts";

function partialDrainEntry(s: Step) {
  return s.bound.plan.spec.recovery.find((r) => r.action === "partialDrain");
}

async function drainFact(s: Step, kind: "intent" | "fact", detail: Record<string, unknown>) {
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: "drain",
    kind,
    detail,
    nowMs: s.deps.clock.now(),
  });
}

/**
 * Every Kubernetes call of the drain (the pod lists, each eviction, each pod read) is bounded by
 * the drain's call bound (a TalosUpgrade's drain transport deadline, a ConfigApply's apply
 * transport deadline); one that passes it throws `KubeTimeout`.
 */
function callBound(s: Step) {
  return {
    timeoutMs: s.deps.callTimeoutMs(disruptionBounds(s.bound.plan).drainCallSeconds * 1000),
  };
}

/** Plans the drain from a fresh pod list; refuses before any eviction when the plan says so. */
export async function planNodeDrain(s: Step): Promise<DrainPlan> {
  return (await planWithPods(s)).plan;
}

/** The drain plan and the pod list it was made from (which names each pod's workload). */
async function planWithPods(s: Step) {
  const pods = (await s.deps.kube.listPods(s.node, callBound(s))).items;
  const plan = planDrain({
    node: s.node,
    pods,
    drainBoundSeconds: disruptionBounds(s.bound.plan).drainTimeoutSeconds,
    partialDrainAuthorized: partialDrainEntry(s) !== undefined,
  });
  return { plan, pods };
}

/**
 * Drains the node through the Eviction API only: never delete, never force. Every eviction is
 * an intent and a recorded outcome; accepted evictions carry the pod's grace deadline. The drain
 * bound is a client wait, not proof that draining stopped: when it passes with pods remaining,
 * the attempt is accounted as the target's refusal and the step is unresolved with the
 * remaining pods recorded.
 */
export async function drainPhase(s: Step): Promise<PhaseResult> {
  let plan: DrainPlan, pods: readonly KubePod[];
  try {
    ({ plan, pods } = await planWithPods(s));
  } catch (e) {
    // Nothing was evicted: the pods could not be read in time, so the step holds.
    return halt(unresolved("PodsUnreadable", errorText(e)));
  }
  await drainFact(s, "fact", {
    planned: plan.evict.map(key),
    skipped: plan.skipped.map((x) => `${key(x.pod)}:${x.reason}`),
    blockers: plan.blockers.map((b) => `${key(b.pod)}:${b.reason}:${b.graceSeconds}s`),
    verdict: plan.verdict,
  });
  if (plan.verdict === "refused") {
    return halt(
      unresolved(
        "DrainPlanRefused",
        `drain of ${s.node} refused: ${
          plan.blockers.map((b) => `${key(b.pod)} ${b.reason}`).join(", ")
        }`,
      ),
    );
  }
  const r = await mutate(s, {
    phase: "drain",
    request: {
      verb: "evict",
      node: s.node,
      pods: plan.evict.map(key),
      drainBoundSeconds: disruptionBounds(s.bound.plan).drainTimeoutSeconds,
    },
    route: "kube-apiserver",
    deadline: disruptionBounds(s.bound.plan).drain,
    send: (_timeoutMs, sendByMs) => drainUntilDone(s, plan, pods, sendByMs),
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  return r.sent.responseClass === "accepted"
    ? proceed(undefined)
    : halt(unresolved("DrainIncomplete", r.sent.detail));
}

async function drainUntilDone(
  s: Step,
  plan: DrainPlan,
  pods: readonly KubePod[],
  sendByMs: number,
) {
  const { clock, pollIntervalMs } = s.deps;
  const boundMs = disruptionBounds(s.bound.plan).drainTimeoutSeconds * 1000;
  // A drain held by a PDB is reported while it waits, naming the budget (docs/operating.md#stalls).
  const stall = new StallWatch(s, "drain");
  const stallMs = stallAfterMs(s, boundMs);
  const r = await runDrain(
    {
      kube: s.deps.kube,
      clock,
      pollIntervalMs,
      callTimeoutMs: callBound(s).timeoutMs,
      wake: s.deps.drainWake ?? "poll",
      sendByMs,
      ...(s.deps.signal ? { signal: s.deps.signal } : {}),
      record: (kind, detail) => drainFact(s, kind, detail),
      onPass: async (held, nowMs) => {
        const blocking = new Map<string, string[]>();
        for (const h of held) {
          const pdb = pdbOfRefusal(h.pod.namespace, h.message) ??
            `eviction of ${key(h.pod)} (HTTP ${h.httpStatus})`;
          blocking.set(pdb, [...(blocking.get(pdb) ?? []), key(h.pod)]);
          stall.blocked(
            { name: pdb, holding: blocking.get(pdb)!.join(", "), detail: h.message },
            nowMs,
          );
        }
        stall.keepOnly(new Set(blocking.keys()));
        await stall.check(nowMs, stallMs);
      },
    },
    plan,
    pods,
    boundMs,
  );
  if (r.kind === "drained") {
    return { responseClass: "accepted", detail: `drained ${r.evicted} pod(s)` } as const;
  }
  if (r.kind === "refused") {
    return {
      responseClass: "target-error",
      detail: `eviction of ${r.pod} refused: ${r.reason}: ${r.message}`,
    } as const;
  }
  return await boundReached(s, r.remaining, r.graceDeadlineMs);
}

async function boundReached(
  s: Step,
  remaining: readonly KubePod[],
  graceDeadline: ReadonlyMap<string, number>,
): Promise<Sent<undefined>> {
  const list = remaining.map((p) => ({
    pod: key(p),
    terminating: p.deletionTimestamp !== undefined,
    graceDeadlineMs: graceDeadline.get(key(p)) ?? null,
  }));
  await drainFact(s, "fact", { boundReached: true, remaining: list });
  const entry = partialDrainEntry(s);
  if (entry && entry.action === "partialDrain" && remaining.length <= entry.maxRemainingPods) {
    // A reviewed partial-drain entry bound in the plan is the only thing that lets the step go on.
    return {
      responseClass: "accepted",
      detail: `partial drain reviewed by ${entry.reviewedBy}: ${remaining.length} pod(s) remain`,
    };
  }
  return {
    responseClass: "target-error",
    detail: `drain bound reached with ${remaining.length} pod(s) remaining: ${
      list.map((x) => x.pod).join(", ")
    }`,
  };
}
