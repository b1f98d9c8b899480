import type { KubePod, PodRef } from "../../ports/kube.ts";
import { type DrainPlan, planDrain } from "../drain_plan.ts";
import type { StepState } from "./deps.ts";
import { halt, type PhaseResult, proceed, unresolved } from "./halt.ts";
import { errorText, mutate, type Sent } from "./mutation.ts";
import { pdbOfRefusal, stallAfterMs, StallWatch } from "../operating/stall.ts";

const key = (p: PodRef) => `${p.namespace}/${p.name}`;

function partialDrainEntry(s: StepState) {
  return s.bound.plan.spec.recovery.find((r) => r.action === "partialDrain");
}

async function drainFact(s: StepState, kind: "intent" | "fact", detail: Record<string, unknown>) {
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
 * the drain's transport deadline; one that passes it throws `KubeTimeout`.
 */
function callBound(s: StepState) {
  return {
    timeoutMs: s.deps.callTimeoutMs(
      s.bound.plan.spec.phases.deadlines.drain.transportSeconds * 1000,
    ),
  };
}

/** Plans the drain from a fresh pod list; refuses before any eviction when the plan says so. */
export async function planNodeDrain(s: StepState): Promise<DrainPlan> {
  const pods = (await s.deps.kube.listPods(s.node, callBound(s))).items;
  return planDrain({
    node: s.node,
    pods,
    drainBoundSeconds: s.bound.plan.spec.phases.drainTimeoutSeconds,
    partialDrainAuthorized: partialDrainEntry(s) !== undefined,
  });
}

/**
 * Drains the node through the Eviction API only: never delete, never force. Every eviction is
 * an intent and a recorded outcome; accepted evictions carry the pod's grace deadline. The drain
 * bound is a client wait, not proof that draining stopped: when it passes with pods remaining,
 * the attempt is accounted as the target's refusal and the step is unresolved with the
 * remaining pods recorded.
 */
export async function drainPhase(s: StepState): Promise<PhaseResult> {
  let plan: DrainPlan;
  try {
    plan = await planNodeDrain(s);
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
      drainBoundSeconds: s.bound.plan.spec.phases.drainTimeoutSeconds,
    },
    route: "kube-apiserver",
    deadline: s.bound.plan.spec.phases.deadlines.drain,
    send: () => runDrain(s, plan),
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  return r.sent.responseClass === "accepted"
    ? proceed(undefined)
    : halt(unresolved("DrainIncomplete", r.sent.detail));
}

async function runDrain(s: StepState, plan: DrainPlan): Promise<Sent<undefined>> {
  const { clock, pollIntervalMs } = s.deps;
  const boundMs = s.bound.plan.spec.phases.drainTimeoutSeconds * 1000;
  const deadline = clock.now() + boundMs;
  const toEvict = new Map(plan.evict.map((p) => [key(p), p]));
  const graceDeadline = new Map<string, number>();
  // A drain held by a PDB is reported while it waits, naming the budget (docs/operating.md#stalls).
  const stall = new StallWatch(s, "drain");
  const stallMs = stallAfterMs(s, boundMs);
  while (true) {
    const failure = await evictPending(s, toEvict, graceDeadline, stall);
    if (failure) return failure;
    await stall.check(clock.now(), stallMs);
    const remaining = await remainingPods(s, plan);
    if (remaining.length === 0) {
      return { responseClass: "accepted", detail: `drained ${plan.evict.length} pod(s)` };
    }
    if (clock.now() >= deadline) return boundReached(s, remaining, graceDeadline);
    await clock.sleep(Math.min(pollIntervalMs, Math.max(1, deadline - clock.now())), s.deps.signal);
  }
}

/** Sends one eviction to every pod not yet accepted; returns a failure that ends the drain. */
async function evictPending(
  s: StepState,
  toEvict: Map<string, PodRef>,
  graceDeadline: Map<string, number>,
  stall: StallWatch,
): Promise<Sent<undefined> | undefined> {
  const blocking = new Map<string, string[]>();
  for (const [k, pod] of [...toEvict]) {
    await drainFact(s, "intent", { evict: k });
    const out = await s.deps.kube.evict(pod, callBound(s));
    const now = s.deps.clock.now();
    if (out.kind === "accepted" || out.kind === "gone") {
      toEvict.delete(k);
      const current = out.kind === "accepted"
        ? await s.deps.kube.getPod(pod, callBound(s))
        : undefined;
      const grace = current?.terminationGracePeriodSeconds ?? 0;
      graceDeadline.set(k, now + grace * 1000);
      await drainFact(s, "fact", {
        evict: k,
        outcome: out.kind,
        graceDeadlineMs: now + grace * 1000,
      });
    } else if (out.kind === "blocked") {
      const pdb = pdbOfRefusal(pod.namespace, out.message) ??
        `eviction of ${k} (HTTP ${out.httpStatus})`;
      blocking.set(pdb, [...(blocking.get(pdb) ?? []), k]);
      stall.blocked({
        name: pdb,
        holding: (blocking.get(pdb) ?? []).join(", "),
        detail: out.message,
      }, now);
      await drainFact(s, "fact", {
        evict: k,
        outcome: "blocked",
        httpStatus: out.httpStatus,
        message: out.message,
      });
    } else {
      await drainFact(s, "fact", {
        evict: k,
        outcome: "failed",
        reason: out.reason,
        message: out.message,
      });
      return {
        responseClass: "target-error",
        detail: `eviction of ${k} refused: ${out.reason}: ${out.message}`,
      };
    }
  }
  stall.keepOnly(new Set(blocking.keys()));
  return undefined;
}

async function remainingPods(s: StepState, plan: DrainPlan): Promise<KubePod[]> {
  const wanted = new Set(plan.evict.map(key));
  const pods = (await s.deps.kube.listPods(s.node, callBound(s))).items;
  return pods.filter((p) => wanted.has(key(p)));
}

async function boundReached(
  s: StepState,
  remaining: KubePod[],
  graceDeadline: Map<string, number>,
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
