/**
 * Builds the execution report's model from journal records. Pure and deterministic: the same
 * rows, head and `generatedAt` give the same model (and so the same report bytes). Everything
 * shown comes from the journal; the caller adds only what the journal does not hold (plan
 * identity from Git and the trust root, node roles from the plan, the render time).
 */
import { type Phase, PHASES, type ResponseClass } from "../domain/operation.ts";
import type { JournalRows, OperationRow, PhaseRow } from "./journal_rows.ts";
import { journalSafeguards } from "./journal_safeguards.ts";
import type {
  AttemptAccount,
  ExecutionOutcome,
  ExecutionReportModel,
  HealthRound,
  JournalHead,
  NodeTimeline,
  PhaseOutcome,
  PhaseSpan,
  PlanIdentity,
  ReasonLine,
  RecoveryDecision,
  SafeguardResult,
} from "./model.ts";
import type { Component } from "./rollback_caveats.ts";

/** A node of the plan, in plan order. */
export interface PlanNode {
  readonly name: string;
  readonly role: "worker" | "controlplane";
}

/** What the reconciler knows about how the executor ended (absent while it runs). */
export interface ExecutorEnd {
  readonly state: "completed" | "halted" | "stopped";
  readonly reasons: readonly ReasonLine[];
}

/** Inputs of {@link executionReportFromJournal}. */
export interface ExecutionReportInput {
  readonly rows: JournalRows;
  readonly identity: PlanIdentity;
  readonly nodes: readonly PlanNode[];
  readonly head: JournalHead;
  readonly generatedAt: number;
  readonly end?: ExecutorEnd;
  /** Plan-time safeguard rows (from checks); journal-derived rows override them. */
  readonly planSafeguards?: readonly SafeguardResult[];
  readonly components?: readonly Component[];
}

const DEFAULT_COMPONENTS: readonly Component[] = ["talos"];

/** The execution report model of the plan `identity.digest`. */
export function executionReportFromJournal(input: ExecutionReportInput): ExecutionReportModel {
  const { rows, identity } = input;
  const ops = rows.operations.filter((o) => o.plan_digest === identity.digest)
    .slice().sort((a, b) => a.created_at_ms - b.created_at_ms || a.step.localeCompare(b.step));
  const opIds = new Set(ops.map((o) => o.id));
  const plan = rows.plans.find((p) => p.digest === identity.digest);
  const startedAt = plan?.approved_at_ms ?? plan?.first_seen_at_ms ?? input.generatedAt;
  const rounds = planRounds(input, ops, opIds, startedAt);
  const nodes = input.nodes.map((n) => nodeTimeline(n, ops, input.rows, rounds));
  const attempts = attemptAccounts(rows, ops);
  const outcome = executionOutcome(nodes, input.end);
  const lastAt = lastActivity(nodes, rounds, startedAt);
  const derived = journalSafeguards({ ops, rows, rounds, nodes: input.nodes });
  return {
    plan: identity,
    generatedAt: input.generatedAt,
    reasons: outcomeReasons(nodes, input.end),
    safeguards: mergeSafeguards(input.planSafeguards ?? [], derived),
    sourceChecks: [],
    assertions: [],
    healthRounds: rounds,
    components: input.components ?? DEFAULT_COMPONENTS,
    outcome,
    startedAt,
    ...(outcome === "running" ? {} : { finishedAt: lastAt }),
    nodes,
    attempts,
    recoveries: recoveries(rows, ops),
    journal: input.head,
  };
}

function byTime<T extends { readonly at_ms: number }>(a: T, b: T): number {
  return a.at_ms - b.at_ms;
}

/** Health rounds of this plan: those of its operations, and gate rounds within its span. */
function planRounds(
  input: ExecutionReportInput,
  ops: readonly OperationRow[],
  opIds: ReadonlySet<string>,
  startedAt: number,
): HealthRound[] {
  const { rows, identity } = input;
  const results = new Map<string, HealthRound["results"][number][]>();
  for (const r of rows.health_results.slice().sort((a, b) => a.idx - b.idx)) {
    const list = results.get(r.round_id) ?? [];
    list.push({
      binding: r.binding,
      verdict: checkVerdict(r.outcome),
      ...(r.outcome === "pass" ? {} : { reason: r.reason }),
      evidence: `${r.reason}; ${r.object_uid ?? "no object"}` +
        (r.resource_version ? ` rv ${r.resource_version}` : ""),
    });
    results.set(r.round_id, list);
  }
  const machineOf = new Map(ops.map((o) => [o.id, o.machine]));
  return rows.health_rounds
    .filter((h) =>
      h.operation_id !== null
        ? opIds.has(h.operation_id)
        : h.cluster === identity.cluster && h.started_at_ms >= startedAt && h.purpose === "gate"
    )
    .slice().sort((a, b) =>
      a.started_at_ms - b.started_at_ms || a.finished_at_ms - b.finished_at_ms
    )
    .map((h): HealthRound => {
      const node = h.operation_id
        ? machineOf.get(h.operation_id)
        : ops.find((o) => o.created_at_ms >= h.finished_at_ms)?.machine;
      return {
        id: h.id,
        purpose: h.purpose === "preview" ? "preflight" : h.purpose as HealthRound["purpose"],
        ...(node ? { node } : {}),
        startedAt: h.started_at_ms,
        endedAt: h.finished_at_ms,
        verdict: checkVerdict(h.verdict),
        results: results.get(h.id) ?? [],
      };
    });
}

function checkVerdict(v: string): "pass" | "fail" | "unreadable" {
  return v === "pass" || v === "fail" ? v : "unreadable";
}

/** First and last moment each phase was active for one operation. */
function phaseMoments(
  op: OperationRow,
  rows: JournalRows,
  rounds: readonly HealthRound[],
): Map<Phase, { first: number; last: number }> {
  const m = new Map<Phase, { first: number; last: number }>();
  const touch = (phase: string, at: number) => {
    if (!(PHASES as readonly string[]).includes(phase)) return;
    const cur = m.get(phase as Phase);
    m.set(phase as Phase, {
      first: Math.min(cur?.first ?? at, at),
      last: Math.max(cur?.last ?? at, at),
    });
  };
  const phases: PhaseRow[] = rows.phases.filter((p) => p.operation_id === op.id);
  for (const p of phases.sort(byTime)) touch(p.phase, p.at_ms);
  for (const a of rows.attempts.filter((a) => a.operation_id === op.id)) {
    touch(a.phase, a.sent_at_ms);
    if (a.response_at_ms !== null) touch(a.phase, a.response_at_ms);
  }
  const opRounds = rounds.filter((r) => r.node === op.machine);
  for (const r of opRounds) {
    if (r.purpose === "gate" && r.endedAt <= op.created_at_ms) {
      if (!opRounds.some((o) => o.purpose === "gate" && o.startedAt > r.startedAt)) {
        touch("gate", r.startedAt);
        touch("gate", r.endedAt);
      }
    } else if (r.purpose === "verify" || r.purpose === "post-gate") {
      touch(r.purpose, r.startedAt);
      touch(r.purpose, r.endedAt);
    }
  }
  return m;
}

/** Phases of one operation laid end to end: a phase lasts until the next one starts. */
function nodeTimeline(
  n: PlanNode,
  ops: readonly OperationRow[],
  rows: JournalRows,
  rounds: readonly HealthRound[],
): NodeTimeline {
  const op = ops.find((o) => o.machine === n.name);
  if (!op) return { node: n.name, role: n.role, state: "pending", phases: [] };
  const moments = [...phaseMoments(op, rows, rounds)]
    .sort((a, b) => a[1].first - b[1].first || PHASES.indexOf(a[0]) - PHASES.indexOf(b[0]));
  const live = ["committed", "sending", "verifying"].includes(op.state);
  const spans = moments.map(([phase, t], i): PhaseSpan => {
    const next = moments[i + 1];
    const isLast = next === undefined;
    const outcome = phaseOutcome(op, phase, isLast, rows);
    const endedAt = Math.max(t.last, next?.[1].first ?? t.last);
    return isLast && live
      ? { phase, startedAt: t.first, outcome: "running" }
      : { phase, startedAt: t.first, endedAt, outcome };
  });
  const note = transitionReason(rows, op);
  return {
    node: n.name,
    role: n.role,
    state: op.state as NodeTimeline["state"],
    phases: spans,
    ...(note && op.state !== "completed" ? { note } : {}),
  };
}

function phaseOutcome(
  op: OperationRow,
  phase: Phase,
  isLast: boolean,
  rows: JournalRows,
): PhaseOutcome {
  const attempts = rows.attempts.filter((a) => a.operation_id === op.id && a.phase === phase);
  const last = attempts[attempts.length - 1];
  if (last && last.accounted_by === null) return "unresolved";
  if (last && last.response_class !== "accepted") return "failed";
  if (!isLast) return "ok";
  if (op.state === "unresolved") return "unresolved";
  if (op.state === "failed" || op.state === "rejected") return "failed";
  return "ok";
}

/** The reason of the operation's latest transition, from the hash-chained timeline. */
function transitionReason(rows: JournalRows, op: OperationRow): string | undefined {
  const ev = rows.events.filter((e) => e.operation_id === op.id && e.kind === "transition")
    .sort((a, b) => a.seq - b.seq).pop();
  if (!ev) return undefined;
  try {
    const body = JSON.parse(ev.body) as { reason?: unknown };
    return typeof body.reason === "string" ? body.reason : undefined;
  } catch {
    return undefined;
  }
}

function attemptAccounts(rows: JournalRows, ops: readonly OperationRow[]): AttemptAccount[] {
  return ops.flatMap((op) => {
    const intents = rows.phases.filter((p) => p.operation_id === op.id && p.kind === "intent");
    return rows.attempts.filter((a) => a.operation_id === op.id)
      .slice().sort((a, b) => a.number - b.number)
      .map((a): AttemptAccount => {
        const intent = intents.filter((p) => p.phase === a.phase && p.at_ms <= a.sent_at_ms)
          .sort(byTime).pop();
        return {
          node: op.machine,
          phase: a.phase as Phase,
          attempt: a.number,
          intentAt: intent?.at_ms ?? a.sent_at_ms,
          sentAt: a.sent_at_ms,
          transportDeadline: a.transport_deadline_ms,
          verificationDeadline: a.verification_deadline_ms,
          responseClass: a.response_class as ResponseClass | null,
          accountedBy: a.accounted_by === "response" || a.accounted_by === "recovery"
            ? a.accounted_by
            : null,
          ...(a.response_detail ? { detail: a.response_detail } : {}),
        };
      });
  });
}

function recoveries(rows: JournalRows, ops: readonly OperationRow[]): RecoveryDecision[] {
  const machineOf = new Map(ops.map((o) => [o.id, o.machine]));
  return rows.recoveries.filter((r) => machineOf.has(r.operation_id))
    .slice().sort(byTime)
    .map((r) => ({
      at: r.at_ms,
      node: machineOf.get(r.operation_id)!,
      decision: r.kind,
      actor: r.actor,
      evidence: r.explanation ? `${r.evidence} (${r.explanation})` : r.evidence,
    }));
}

function executionOutcome(nodes: readonly NodeTimeline[], end?: ExecutorEnd): ExecutionOutcome {
  const states = new Set(nodes.map((n) => n.state));
  if (states.has("unresolved")) return "unresolved";
  if (states.has("failed")) return "failed";
  if (states.has("rejected")) return "rejected";
  if (states.has("cancelled")) return "cancelled";
  if (nodes.every((n) => n.state === "completed")) return "completed";
  // Halted before creating an operation (a gate that never passed): nothing failed, nothing was
  // sent for that node; the rollout is held, and saying "failed" would claim more than we saw.
  if (end?.state === "halted") return "held";
  return "running";
}

function outcomeReasons(nodes: readonly NodeTimeline[], end?: ExecutorEnd): ReasonLine[] {
  const lines: ReasonLine[] = [];
  for (const n of nodes) {
    if (n.state === "unresolved" || n.state === "failed" || n.state === "rejected") {
      // Executor transition reasons read `<ReasonCode>: <detail>`.
      const m = /^([A-Z][A-Za-z0-9]+): ([^]*)$/.exec(n.note ?? "");
      lines.push({
        reason: m?.[1] ?? "ExecutionHalted",
        message: m?.[2] ?? n.note ?? `operation is ${n.state}`,
        where: n.node,
      });
    }
  }
  for (const r of end?.reasons ?? []) lines.push(r);
  return lines;
}

function lastActivity(
  nodes: readonly NodeTimeline[],
  rounds: readonly HealthRound[],
  startedAt: number,
): number {
  let last = startedAt;
  for (const n of nodes) for (const p of n.phases) last = Math.max(last, p.endedAt ?? p.startedAt);
  for (const r of rounds) last = Math.max(last, r.endedAt);
  return last;
}

function mergeSafeguards(
  plan: readonly SafeguardResult[],
  derived: readonly SafeguardResult[],
): SafeguardResult[] {
  const ids = new Set(derived.map((d) => d.id));
  return [...plan.filter((p) => !ids.has(p.id)), ...derived];
}
