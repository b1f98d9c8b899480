/**
 * Safeguard rows whose execution (E) and observation (O) evidence sits in the journal: ordering,
 * the single rollout slot, separately recorded phases, verification before the owned uncordon,
 * the gate before each commitment and the post-gate before the next node. Rows without an
 * operation to judge are `not-applicable` with the reason; nothing here passes by default.
 */
import type { JournalRows, OperationRow } from "./journal_rows.ts";
import type { HealthRound, SafeguardResult } from "./model.ts";
import type { SafeguardId } from "./safeguards.ts";

interface Input {
  /** This plan's operations, by creation time. */
  readonly ops: readonly OperationRow[];
  readonly rows: JournalRows;
  readonly rounds: readonly HealthRound[];
  readonly nodes: readonly { readonly name: string; readonly role: string }[];
}

type Check = (i: Input) => { ok: boolean; evidence: string };

const CHECKS: ReadonlyArray<readonly [SafeguardId, Check]> = [
  ["RolloutOrdered", ordered],
  ["SingleRolloutSlot", singleSlot],
  ["ClusterGate", gateBeforeCommit],
  ["HealthReadFreshEachRound", freshRounds],
  ["PhasesRecordedSeparately", phasesSeparate],
  ["PostconditionsThenOwnedUncordon", verifiedBeforeUncordon],
  ["PostGateBeforeNextNode", postGateBeforeNext],
  ["NodeIdentityBound", identityPerAttempt],
  ["CallsBoundedByRemainingTime", deadlinesRecorded],
  ["SchematicPreserved", pinnedSchematicObserved],
];

/** The journal-derived safeguard rows. */
export function journalSafeguards(i: Input): SafeguardResult[] {
  return CHECKS.map(([id, check]): SafeguardResult => {
    if (i.ops.length === 0) {
      return { id, verdict: "not-applicable", evidence: "no operation recorded yet" };
    }
    const r = check(i);
    return r.ok
      ? { id, verdict: "pass", evidence: r.evidence }
      : { id, verdict: "fail", evidence: r.evidence, reason: "SafeguardViolated" };
  });
}

function ordered(i: Input) {
  const order = i.nodes.map((n) => n.name);
  const seen = i.ops.map((o) => order.indexOf(o.machine));
  const ok = seen.every((v, k) => v >= 0 && (k === 0 || v > seen[k - 1]!));
  return {
    ok,
    evidence: ok
      ? `${i.ops.length} operations created in plan order (workers first)`
      : `operations created out of plan order: ${i.ops.map((o) => o.machine).join(", ")}`,
  };
}

/** Last journal moment of an operation (phase, attempt response or round). */
function endOf(i: Input, op: OperationRow): number {
  let t = op.created_at_ms;
  for (const p of i.rows.phases) if (p.operation_id === op.id) t = Math.max(t, p.at_ms);
  for (const a of i.rows.attempts) {
    if (a.operation_id === op.id) t = Math.max(t, a.response_at_ms ?? a.sent_at_ms);
  }
  for (const r of i.rounds) {
    if (r.node === op.machine && r.purpose !== "gate") t = Math.max(t, r.endedAt);
  }
  return t;
}

function singleSlot(i: Input) {
  const overlap = i.ops.find((o, k) => k > 0 && o.created_at_ms < endOf(i, i.ops[k - 1]!));
  return overlap
    ? { ok: false, evidence: `${overlap.machine} committed while the previous node was active` }
    : { ok: true, evidence: `${i.ops.length} operations, none overlapping in time` };
}

function gateBeforeCommit(i: Input) {
  const missing = i.ops.filter((o) =>
    !i.rounds.some((r) =>
      r.purpose === "gate" && r.verdict === "pass" && r.node === o.machine &&
      r.endedAt <= o.created_at_ms
    )
  );
  return missing.length
    ? { ok: false, evidence: `no passing gate before ${missing.map((o) => o.machine).join(", ")}` }
    : { ok: true, evidence: `a passing gate round preceded each of ${i.ops.length} commitments` };
}

function freshRounds(i: Input) {
  const empty = i.rounds.filter((r) => r.results.length === 0);
  const total = i.rounds.reduce((n, r) => n + r.results.length, 0);
  return empty.length
    ? { ok: false, evidence: `${empty.length} rounds recorded without results` }
    : { ok: true, evidence: `${i.rounds.length} rounds, ${total} results, each read in its round` };
}

const SEPARATE = ["install", "cordon", "drain", "reboot"] as const;

function phasesSeparate(i: Input) {
  const done = i.ops.filter((o) => o.state === "completed");
  const bad = done.filter((o) =>
    SEPARATE.some((p) => !i.rows.attempts.some((a) => a.operation_id === o.id && a.phase === p))
  );
  return bad.length
    ? { ok: false, evidence: `phases not separately attempted on ${names(bad)}` }
    : { ok: true, evidence: `${SEPARATE.join(", ")} attempted separately on ${done.length} nodes` };
}

function verifiedBeforeUncordon(i: Input) {
  const done = i.ops.filter((o) => o.state === "completed");
  const bad = done.filter((o) => {
    const uncordon = i.rows.attempts.find((a) => a.operation_id === o.id && a.phase === "uncordon");
    const verified = i.rounds.some((r) =>
      r.node === o.machine && r.purpose === "verify" && r.verdict === "pass" &&
      (!uncordon || r.endedAt <= uncordon.sent_at_ms)
    );
    return !verified;
  });
  return bad.length
    ? { ok: false, evidence: `no passing verification before uncordon on ${names(bad)}` }
    : {
      ok: true,
      evidence: `verification passed before the owned uncordon on ${done.length} nodes`,
    };
}

function postGateBeforeNext(i: Input) {
  const bad = i.ops.filter((o, k) => {
    const next = i.ops[k + 1];
    if (!next) return false;
    return !i.rounds.some((r) =>
      r.node === o.machine && r.purpose === "post-gate" && r.verdict === "pass" &&
      r.endedAt <= next.created_at_ms
    );
  });
  return bad.length
    ? { ok: false, evidence: `next node started without a passing post-gate after ${names(bad)}` }
    : { ok: true, evidence: "each next node started only after a passing post-gate" };
}

function names(ops: readonly OperationRow[]): string {
  return ops.map((o) => o.machine).join(", ");
}

/**
 * The journal admits an attempt only after a fresh observation of the machine's bound identity
 * (ER comparison 3), so every recorded attempt is that evidence; none recorded proves nothing.
 */
function identityPerAttempt(i: Input) {
  const mine = new Set(i.ops.map((o) => o.id));
  const n = i.rows.attempts.filter((a) => mine.has(a.operation_id)).length;
  return {
    ok: n > 0,
    evidence: n > 0
      ? `each of ${n} attempts was admitted on a fresh observation of the bound node identity`
      : "no attempt recorded",
  };
}

/** Every attempt carries absolute transport and verification deadlines, transport first. */
function deadlinesRecorded(i: Input) {
  const mine = new Set(i.ops.map((o) => o.id));
  const atts = i.rows.attempts.filter((a) => mine.has(a.operation_id));
  const bad = atts.filter((a) =>
    !(a.sent_at_ms < a.transport_deadline_ms &&
      a.transport_deadline_ms <= a.verification_deadline_ms)
  );
  return {
    ok: atts.length > 0 && bad.length === 0,
    evidence: bad.length === 0
      ? `${atts.length} attempts each recorded absolute transport and verification deadlines`
      : `${bad.length} attempts without consistent deadlines`,
  };
}

/**
 * `completed` is only reachable through a completion observation equal to the bound
 * postcondition (target version, pinned schematic, bound health), so each completed operation is
 * that observation; nodes not completed are not counted as evidence either way.
 */
function pinnedSchematicObserved(i: Input) {
  const done = i.ops.filter((o) => o.state === "completed").length;
  return {
    ok: done > 0,
    evidence: done > 0
      ? `${done} completed operations each observed the pinned schematic and target version`
      : "no operation completed yet",
  };
}
