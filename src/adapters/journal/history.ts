/**
 * The journal's typed read models (`ports/journal_history.ts`), assembled from its tables and
 * its timeline in one read transaction (`Snapshot`), so a report sees one consistent moment. Event bodies are
 * parsed here, once; callers never read tables or columns by name.
 */
import type { Kysely } from "kysely";
import {
  holdsScope,
  type OperationState,
  type Phase,
  type ResponseClass,
} from "../../domain/operation.ts";
import type { ObservationPurpose, PlanState, StepBinding } from "../../ports/journal.ts";
import type {
  AttemptEntry,
  DispatchCheckEntry,
  EvidenceCheckEntry,
  HealthRoundEntry,
  KubernetesCheckEntry,
  KubernetesRowEntry,
  NameBinding,
  ObservationEntry,
  OperationHistory,
  PlanEntry,
  PlanHistory,
  RecoveryEntryEntry,
  RefusalEntry,
  SlotHolding,
  TakeoverEntry,
  TransitionEntry,
} from "../../ports/journal_history.ts";
import type { EventTable, JournalDB, ObservationTable, PlanTable } from "./schema.ts";
import { readRolloutEvents } from "./beside.ts";
import { obligationsOf } from "./hook_obligations.ts";
import { isVerdict, type Verdict } from "../../domain/verdict.ts";
import type { Snapshot } from "./store.ts";

/** Reads the history of plan `digest`; undefined when the journal never recorded it. */
export function readPlanHistory(
  snapshot: Snapshot,
  digest: string,
): Promise<PlanHistory | undefined> {
  return snapshot(async (tx) => {
    const p = await tx.selectFrom("plans").selectAll().where("digest", "=", digest)
      .executeTakeFirst();
    if (!p) return undefined;
    const ops = await tx.selectFrom("operations").selectAll().where("plan_digest", "=", digest)
      .orderBy("created_at_ms").orderBy("step").execute();
    // The plan's operations, the cluster's and its rounds as subqueries rather than lists of the
    // ids read above: the same rows inside this one snapshot, and a statement whose text does not
    // grow with the history (kysely built a parameter per id, twice a seed, issue 16).
    const opIds = ops.map((o) => o.id);
    const planOps = tx.selectFrom("operations").select("id").where("plan_digest", "=", digest);
    // One connection inside the transaction: statements run one after another.
    const phases = await tx.selectFrom("phases").selectAll().where("operation_id", "in", planOps)
      .orderBy("revision").orderBy("at_ms").execute();
    const attempts = await tx.selectFrom("attempts").selectAll()
      .where("operation_id", "in", planOps).orderBy("number").execute();
    const observations = await tx.selectFrom("observations").selectAll()
      .where("plan_digest", "=", digest).orderBy("basis").execute();
    const recoveries = await tx.selectFrom("recoveries").selectAll()
      .where("operation_id", "in", planOps).orderBy("at_ms").execute();
    const clusterOps = await tx.selectFrom("operations")
      .select(["id", "plan_digest", "machine", "created_at_ms"])
      .where("cluster", "=", p.cluster).orderBy("created_at_ms").orderBy("id").execute();
    const since = p.approved_at_ms ?? p.first_seen_at_ms;
    const planRounds = tx.selectFrom("health_rounds").where("cluster", "=", p.cluster)
      .where((eb) =>
        eb.or([
          eb("operation_id", "in", planOps),
          eb.and([eb("operation_id", "is", null), eb("started_at_ms", ">=", since)]),
        ])
      );
    const rounds = await planRounds.selectAll().orderBy("started_at_ms").orderBy("finished_at_ms")
      .execute();
    const results = await tx.selectFrom("health_results").selectAll()
      .where("round_id", "in", planRounds.select("id")).orderBy("round_id").orderBy("idx")
      .execute();
    const clusterOpIds = tx.selectFrom("operations").select("id").where("cluster", "=", p.cluster);
    const events = await tx.selectFrom("events").selectAll()
      .where((eb) =>
        eb.or([
          eb("operation_id", "in", clusterOpIds),
          eb("kind", "in", ["refusal", "evidence-check", "dispatch-check"]),
        ])
      ).orderBy("seq").execute();

    const transitions = new Map<string, TransitionEntry[]>();
    const takeovers = new Map<string, TakeoverEntry[]>();
    const stateMoves = new Map<string, { atMs: number; to: string }[]>();
    for (const e of events) {
      if (!e.operation_id) continue;
      const b = body(e);
      const to = e.kind === "transition"
        ? b["to"]
        : e.kind === "ownership"
        ? b["stateAfter"]
        : undefined;
      if (typeof to !== "string") continue;
      push(stateMoves, e.operation_id, { atMs: e.at_ms, to });
      if (e.kind === "ownership") {
        push(takeovers, e.operation_id, {
          seq: e.seq,
          atMs: e.at_ms,
          from: str(b["from"]),
          to: str(b["to"]),
          stateAfter: to,
        });
        continue;
      }
      push(transitions, e.operation_id, {
        seq: e.seq,
        atMs: e.at_ms,
        from: str(b["from"]),
        to,
        reason: str(b["reason"]),
      });
    }

    const operations = ops.map((o): OperationHistory => ({
      id: o.id,
      step: o.step,
      machine: o.machine,
      state: o.state as OperationState,
      createdAtMs: o.created_at_ms,
      ownerSinceMs: o.owner_since_ms,
      phases: phases.filter((x) => x.operation_id === o.id).map((x) => ({
        phase: x.phase as Phase,
        kind: x.kind === "intent" ? "intent" : "fact",
        atMs: x.at_ms,
        revision: x.revision,
        detail: parseObject(x.detail),
      })),
      attempts: attempts.filter((a) => a.operation_id === o.id).map((a): AttemptEntry => ({
        id: a.id,
        number: a.number,
        phase: a.phase as Phase,
        route: a.route,
        evidenceId: a.evidence_id,
        sentAtMs: a.sent_at_ms,
        transportDeadlineMs: a.transport_deadline_ms,
        verificationDeadlineMs: a.verification_deadline_ms,
        response: a.response_class === null ? null : {
          class: a.response_class as ResponseClass,
          detail: a.response_detail ?? "",
          atMs: a.response_at_ms ?? a.sent_at_ms,
        },
        accountedBy: a.accounted_by === "response" || a.accounted_by === "recovery"
          ? a.accounted_by
          : null,
      })),
      observations: observations.filter((x) => x.machine === o.machine).map(observationEntry),
      transitions: transitions.get(o.id) ?? [],
      takeovers: takeovers.get(o.id) ?? [],
      recoveries: recoveries.filter((r) => r.operation_id === o.id).map((r) => ({
        kind: r.kind,
        actor: r.actor,
        evidence: r.evidence,
        explanation: r.explanation,
        atMs: r.at_ms,
      })),
    }));

    const healthRounds = rounds.map((r): HealthRoundEntry => ({
      id: r.id,
      purpose: r.purpose as HealthRoundEntry["purpose"],
      operationId: r.operation_id,
      startedAtMs: r.started_at_ms,
      finishedAtMs: r.finished_at_ms,
      verdict: verdict(r.verdict),
      results: results.filter((x) => x.round_id === r.id).map((x) => ({
        binding: x.binding,
        reader: x.reader ?? null,
        outcome: verdict(x.outcome),
        reason: x.reason,
        objectUid: x.object_uid,
        objectRef: x.object_ref ?? null,
        resourceVersion: x.resource_version,
        observedAtMs: x.observed_at_ms,
      })),
    }));

    const mine = new Set(opIds);
    const refusals: RefusalEntry[] = [];
    const evidenceChecks: EvidenceCheckEntry[] = [];
    const dispatchChecks: DispatchCheckEntry[] = [];
    for (const e of events) {
      const b = body(e);
      if (e.kind === "refusal" && (b["plan"] === digest || mine.has(e.operation_id ?? ""))) {
        refusals.push({
          seq: e.seq,
          atMs: e.at_ms,
          transaction: str(b["transaction"]),
          comparison: typeof b["comparison"] === "number" ? b["comparison"] : null,
          cause: str(b["cause"]),
          detail: str(b["detail"]),
          step: typeof b["step"] === "string" ? b["step"] : null,
          operationId: e.operation_id,
        });
      }
      if (e.kind === "dispatch-check" && b["plan"] === digest) {
        const v = b["verdict"];
        dispatchChecks.push({
          seq: e.seq,
          atMs: e.at_ms,
          node: typeof b["node"] === "string" ? b["node"] : null,
          verdict: v === "pass" || v === "refused" ? v : "held",
          installers: (Array.isArray(b["installers"]) ? b["installers"] : []).filter(isObject)
            .map((i) => ({
              hop: typeof i["hop"] === "number" ? i["hop"] : -1,
              reference: str(i["reference"]),
              pinned: str(i["pinned"]),
              platform: str(i["platform"]),
              verdict: str(i["verdict"]),
              reason: typeof i["reason"] === "string" ? i["reason"] : null,
              digest: typeof i["digest"] === "string" ? i["digest"] : null,
              indexDigest: typeof i["indexDigest"] === "string" ? i["indexDigest"] : null,
              registry: typeof i["registry"] === "string" ? i["registry"] : null,
            })),
          ...(isObject(b["kubernetes"]) ? { kubernetes: kubernetesCheck(b["kubernetes"]) } : {}),
        });
      }
      if (e.kind === "evidence-check" && b["plan"] === digest) {
        evidenceChecks.push({
          seq: e.seq,
          atMs: e.at_ms,
          manifestPath: str(b["manifest"]),
          manifestSha256: str(b["manifestSha256"]),
          verdict: verdict(str(b["verdict"])),
          detail: isObject(b["detail"]) ? b["detail"] : {},
        });
      }
    }

    const slot = clusterOps.map((o): SlotHolding => {
      const release = (stateMoves.get(o.id) ?? [])
        .find((m) => !holdsScope(m.to as OperationState));
      return {
        operationId: o.id,
        planDigest: o.plan_digest,
        machine: o.machine,
        heldFromMs: o.created_at_ms,
        releasedAtMs: release?.atMs ?? null,
      };
    });

    return {
      plan: planEntry(p),
      operations,
      healthRounds,
      refusals,
      evidenceChecks,
      dispatchChecks,
      slot,
      rolloutEvents: await readRolloutEvents(tx, digest),
      hookObligations: await obligationsOf(tx, operations.map((o) => o.id)),
      recoveryEntries: await readRecoveryEntries(tx, p.first_seen_at_ms),
    };
  });
}

/**
 * Recovery-mode entries at or after `sinceMs` (a journal restore's): the report must say the
 * journal it was built from was restored, and that the plan's approval predates it.
 */
async function readRecoveryEntries(
  db: Kysely<JournalDB>,
  sinceMs: number,
): Promise<RecoveryEntryEntry[]> {
  const rows = await db.selectFrom("events").selectAll().where("kind", "=", "recovery-entry")
    .where("at_ms", ">=", sinceMs).orderBy("seq").execute();
  return rows.map((e) => {
    let b: Record<string, unknown> = {};
    try {
      b = JSON.parse(e.body) as Record<string, unknown>;
    } catch { /* an unreadable body still names the entry */ }
    return {
      seq: e.seq,
      atMs: e.at_ms,
      epoch: e.epoch ?? String(b["epoch"] ?? ""),
      actor: e.actor,
      evidence: typeof b["evidence"] === "string" ? b["evidence"] : "",
    };
  });
}

/** Machines whose scope gate is frozen now. */
export async function readFrozenMachines(db: Kysely<JournalDB>): Promise<string[]> {
  const rows = await db.selectFrom("machines").select("machine").where("frozen", "=", 1)
    .orderBy("machine").execute();
  return rows.map((r) => r.machine);
}

/** Every observation of one machine, by basis. */
export async function readMachineObservations(
  db: Kysely<JournalDB>,
  machine: string,
): Promise<ObservationEntry[]> {
  const rows = await db.selectFrom("observations").selectAll().where("machine", "=", machine)
    .orderBy("basis").execute();
  return rows.map(observationEntry);
}

function observationEntry(x: ObservationTable): ObservationEntry {
  return {
    id: x.id,
    purpose: x.purpose as ObservationPurpose,
    operationId: x.operation_id,
    basis: x.basis,
    revision: x.revision,
    digest: x.digest,
    objectUid: x.object_uid,
    resourceVersion: x.resource_version,
    observedAtMs: x.observed_at_ms,
    summary: x.summary,
    ...(x.machine_identity !== null ? { machineIdentity: x.machine_identity } : {}),
  };
}

/** Every recorded plan, by first sighting. */
export async function readPlans(db: Kysely<JournalDB>): Promise<PlanEntry[]> {
  const rows = await db.selectFrom("plans").selectAll().orderBy("first_seen_at_ms")
    .orderBy("digest").execute();
  return rows.map(planEntry);
}

/** Every name → digest binding. */
export async function readNameBindings(db: Kysely<JournalDB>): Promise<NameBinding[]> {
  const rows = await db.selectFrom("plan_names").selectAll().orderBy("name").execute();
  return rows.map((r) => ({ name: r.name, digest: r.digest }));
}

function planEntry(p: PlanTable): PlanEntry {
  return {
    digest: p.digest,
    name: p.name,
    kind: p.kind,
    cluster: p.cluster,
    state: p.state as PlanState,
    approvedAtMs: p.approved_at_ms,
    firstSeenAtMs: p.first_seen_at_ms,
    firstSeenCommit: p.first_seen_commit,
    expiresAtMs: p.expires_at_ms,
    steps: JSON.parse(p.steps_json) as StepBinding[],
  };
}

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

function body(e: EventTable): Record<string, unknown> {
  return parseObject(e.body);
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

/** A stored verdict; anything else reads as unreadable (never as a pass). */
function verdict(v: string): Verdict {
  return isVerdict(v) ? v : "unreadable";
}

/** A KubernetesUpgrade check's record as the event body holds it. */
function kubernetesCheck(k: Record<string, unknown>): KubernetesCheckEntry {
  const v = (x: unknown) =>
    (x === "pass" || x === "refused" ? x : "held") as "pass" | "refused" | "held";
  const row = (x: unknown): KubernetesRowEntry => {
    const r = isObject(x) ? x : {};
    return {
      verdict: v(r["verdict"]),
      evidence: str(r["evidence"]),
      reasons: (Array.isArray(r["problems"]) ? r["problems"] : []).filter(isObject)
        .map((p) => str(p["reason"])),
    };
  };
  return {
    verdict: v(k["verdict"]),
    step: typeof k["step"] === "string" ? k["step"] : null,
    writes: typeof k["writes"] === "number" ? k["writes"] : -1,
    uniformOs: row(k["uniformOs"]),
    skew: row(k["skew"]),
    ownership: row(k["ownership"]),
  };
}
