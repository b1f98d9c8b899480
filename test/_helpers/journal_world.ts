/** Builders for journal tests: a counter IdSource, a two-step plan, evidence and tokens. */
import type { IdSource } from "../../src/ports/clock.ts";
import type { PostconditionReading } from "../../src/domain/operation.ts";
import type {
  Actor,
  Journal,
  ObservationPurpose,
  OperationRecord,
  OwnerToken,
  PlanRecordInput,
} from "../../src/ports/journal.ts";

/** Deterministic ids: `<prefix>_<counter>`; epochs stay distinct across recovery entries. */
export function counterIds(tag = "t"): IdSource {
  let n = 0;
  return { newId: (prefix) => `${prefix}_${tag}${String(++n).padStart(6, "0")}` };
}

export const T0 = Date.UTC(2026, 10, 1);
export const HOUR = 3_600_000;

export const CONTROLLER: Actor = { identity: "cairn-a", role: "controller" };
export const APPROVER: Actor = { identity: "bob@example.com", role: "approver" };
export const ADMIN: Actor = { identity: "carol@example.com", role: "recovery-admin" };

/** A plan with two steps on two machines of cluster home-ops. */
export function planInput(over: Partial<PlanRecordInput> = {}): PlanRecordInput {
  return {
    digest: "d".repeat(64),
    name: "talos-v1.14.2",
    kind: "TalosUpgrade",
    cluster: "home-ops",
    bytes: "apiVersion: cairn.dev/v1alpha1\n",
    signatures: "-----BEGIN SSH SIGNATURE-----\n",
    firstSeenCommit: "c0ffee",
    expiresAtMs: T0 + 24 * HOUR,
    maxAttempts: 3,
    maxEvidenceAgeMs: 5 * 60_000,
    steps: [
      { step: "worker-1/0", machine: "worker-1", preDigest: "v1.13.9", postDigest: "v1.14.2" },
      { step: "worker-2/0", machine: "worker-2", preDigest: "v1.13.9", postDigest: "v1.14.2" },
    ],
    nowMs: T0,
    ...over,
  };
}

/**
 * Records an observation with sensible defaults. A completion read states its postcondition
 * reading: by default `established` at the plan's target digest and `contradicted` otherwise;
 * pass `postcondition` to record anything else (e.g. `unreadable`).
 */
export async function observe(
  j: Journal,
  a: {
    machine?: string;
    purpose?: ObservationPurpose;
    digest?: string;
    at: number;
    plan?: string;
    op?: string;
    rv?: string;
    rvStart?: string;
    postcondition?: PostconditionReading;
  },
) {
  const purpose = a.purpose ?? "evidence";
  const reading = a.postcondition ??
    ((a.digest ?? "v1.13.9") === "v1.14.2" ? "established" : "contradicted");
  return await j.recordObservation({
    machine: a.machine ?? "worker-1",
    purpose,
    ...(a.plan ? { planDigest: a.plan } : {}),
    ...(a.op ? { operationId: a.op } : {}),
    digest: a.digest ?? "v1.13.9",
    objectUid: "uid-" + (a.machine ?? "worker-1"),
    resourceVersion: a.rv ?? "100",
    ...(a.rvStart ? { resourceVersionAtStart: a.rvStart } : {}),
    observedGeneration: 1,
    observedAtMs: a.at,
    summary: "read",
    ...(purpose === "completion" ? { postcondition: reading } : {}),
    actor: CONTROLLER,
  });
}

/** A journal with the plan recorded and approved at T0. */
export async function approvedPlan(j: Journal, over: Partial<PlanRecordInput> = {}) {
  const plan = await j.recordPlan(planInput(over));
  await j.approvePlan(plan.digest, APPROVER, T0 + 1000);
  return plan;
}

/** Evidence for `machine` then a commitment; returns the op and its owner token. */
export async function committed(
  j: Journal,
  a: { plan: string; step?: string; machine?: string; at?: number; owner?: string },
): Promise<{ op: OperationRecord; token: OwnerToken; evidence: string }> {
  const at = a.at ?? T0 + 2000;
  const machine = a.machine ?? "worker-1";
  const ev = await observe(j, { machine, at, plan: a.plan });
  const { epoch } = await j.installation();
  const r = await j.commit({
    planDigest: a.plan,
    step: a.step ?? `${machine}/0`,
    evidenceId: ev.id,
    owner: a.owner ?? "cairn-a",
    epoch,
    nowMs: at,
  });
  if (!r.ok) throw new Error(`commit refused: ${r.cause} ${r.detail}`);
  const token = { owner: r.operation.owner, gen: r.operation.ownerGen, epoch };
  return { op: r.operation, token, evidence: ev.id };
}

/** An attempt input for `op` at `at`. */
export function attemptInput(
  op: string,
  token: OwnerToken,
  evidence: string,
  at: number,
) {
  return {
    operationId: op,
    token,
    phase: "install" as const,
    requestDigest: "r".repeat(64),
    route: "apid:worker-1",
    evidenceId: evidence,
    transportDeadlineMs: at + 60_000,
    verificationDeadlineMs: at + 600_000,
    nowMs: at,
  };
}

/**
 * Each journal act that carries no owner token, named, as a controller asks it on worker-1 of
 * `plan` at `at`: with `epoch` when given (the journal refuses it unless that epoch is current),
 * without one otherwise (a wrapper, or `cairn recover`, supplies it).
 */
export function tokenlessActs(
  j: Journal,
  plan: string,
  at: number,
  epoch?: string,
): [string, () => Promise<unknown>][] {
  const e = epoch !== undefined ? { epoch } : {};
  return [
    ["startObservation", () => j.startObservation("worker-1", CONTROLLER, at, epoch)],
    ["recordObservation", () =>
      j.recordObservation({
        machine: "worker-1",
        purpose: "evidence",
        planDigest: plan,
        digest: "v1.13.9",
        objectUid: "uid-worker-1",
        resourceVersion: "100",
        observedGeneration: 1,
        observedAtMs: at,
        summary: "",
        actor: CONTROLLER,
        ...e,
      })],
    ["recordHealthRound", () =>
      j.recordHealthRound({
        cluster: "home-ops",
        purpose: "gate",
        startedAtMs: at,
        finishedAtMs: at,
        results: [{ binding: "ceph", outcome: "pass", reason: "HealthOk", observedAtMs: at }],
        ...e,
      })],
    ["recordDispatchCheck", () =>
      j.recordDispatchCheck({
        planDigest: plan,
        node: "worker-1",
        verdict: "pass",
        detail: {},
        actor: CONTROLLER,
        nowMs: at,
        ...e,
      })],
    ["recordRolloutEvent", () =>
      j.recordRolloutEvent({
        planDigest: plan,
        node: null,
        kind: "hold",
        detail: { reason: "test" },
        actor: CONTROLLER,
        nowMs: at,
        ...e,
      })],
  ];
}
