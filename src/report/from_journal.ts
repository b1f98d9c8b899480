/**
 * Builds the execution report's model from the journal's typed history of one plan. Pure and
 * deterministic: the same history, head and `generatedAt` give the same model (and so the same
 * report bytes). The rows are judged in the domain (`domain/safeguards/`); this module lays out
 * the timeline and accounting and takes the headline the rows allow.
 */
import type { ExecutionEnd } from "../ports/reconcile.ts";
import { isInFlight, type Phase, PHASES } from "../domain/operation.ts";
import { judgeExecution, type PlannedHop } from "../domain/safeguards/judge_execution.ts";
import { completeRows } from "../domain/safeguards/result.ts";
import { executionVerdict, operationsOutcome } from "../domain/safeguards/verdict.ts";
import type { OperationHistory, PlanHistory } from "../ports/journal_history.ts";
import type {
  AttemptAccount,
  ExecutionReportModel,
  HealthRound,
  JournalHead,
  NodeTimeline,
  PhaseOutcome,
  PhaseSpan,
  PlanIdentity,
  RecoveryDecision,
  SafeguardResult,
} from "./model.ts";
import { isReason, type ReasonNote } from "../domain/reasons.ts";
import type { Component } from "./rollback_caveats.ts";
import { besideEvents, hookRows } from "./beside_section.ts";
import { iso } from "./format.ts";

/** A node of the plan, in plan order. */
export interface PlanNode {
  readonly name: string;
  readonly role: "worker" | "controlplane";
}

/** Inputs of {@link executionReportFromJournal}. */
export interface ExecutionReportInput {
  /** The plan's history; absent when the journal has not recorded the plan (yet). */
  readonly history: PlanHistory | undefined;
  readonly identity: PlanIdentity;
  readonly nodes: readonly PlanNode[];
  /** The plan's hops (version and pinned schematic), for the schematic row. */
  readonly hops: readonly PlannedHop[];
  readonly head: JournalHead;
  readonly generatedAt: number;
  readonly end?: ExecutionEnd;
  /** Plan-time safeguard rows (from checks); journal-derived rows override them. */
  readonly planSafeguards?: readonly SafeguardResult[];
  readonly components?: readonly Component[];
}

const DEFAULT_COMPONENTS: readonly Component[] = ["talos"];

const EMPTY: Omit<PlanHistory, "plan"> = {
  operations: [],
  healthRounds: [],
  refusals: [],
  evidenceChecks: [],
  dispatchChecks: [],
  slot: [],
};

/** The execution report model of the plan `identity.digest`. */
export function executionReportFromJournal(input: ExecutionReportInput): ExecutionReportModel {
  const { identity } = input;
  const h = input.history;
  const ops = (h?.operations ?? []).slice()
    .sort((a, b) => a.createdAtMs - b.createdAtMs || a.step.localeCompare(b.step));
  const startedAt = h?.plan.approvedAtMs ?? h?.plan.firstSeenAtMs ?? input.generatedAt;
  const rounds = planRounds(h?.healthRounds ?? [], ops);
  const nodes = input.nodes.map((n) => nodeTimeline(n, ops, rounds));
  const attempts = attemptAccounts(ops);
  const outcome = operationsOutcome(nodes.map((n) => n.state), input.end?.state);
  const lastAt = lastActivity(nodes, rounds, startedAt);
  const judged = h
    ? judgeExecution({ ...EMPTY, ...h, operations: ops, hops: input.hops })
    : judgeExecution({
      plan: { approvedAtMs: null, steps: [] },
      ...EMPTY,
      hops: input.hops,
    });
  const safeguards = completeRows(input.planSafeguards ?? [], judged);
  const { verdict, gaps } = executionVerdict(outcome, safeguards);
  return {
    plan: identity,
    generatedAt: input.generatedAt,
    reasons: [...restoreNotes(h?.recoveryEntries), ...outcomeReasons(nodes, input.end)],
    safeguards,
    sourceChecks: [],
    assertions: [],
    healthRounds: rounds,
    components: input.components ?? DEFAULT_COMPONENTS,
    outcome,
    verdict,
    gaps,
    startedAt,
    ...(outcome === "running" ? {} : { finishedAt: lastAt }),
    nodes,
    attempts,
    recoveries: recoveries(ops),
    journal: input.head,
    ...(h?.rolloutEvents?.length ? { beside: besideEvents(h) } : {}),
    ...(hookRows(h).length ? { hooks: hookRows(h) } : {}),
  };
}

/** Health rounds of this plan, each attributed to the node it gated, verified or post-gated. */
function planRounds(
  rounds: PlanHistory["healthRounds"],
  ops: readonly OperationHistory[],
): HealthRound[] {
  const machineOf = new Map(ops.map((o) => [o.id, o.machine]));
  return rounds
    .filter((r) => r.operationId !== null ? machineOf.has(r.operationId) : r.purpose === "gate")
    .map((r): HealthRound => {
      const node = r.operationId
        ? machineOf.get(r.operationId)
        : ops.find((o) => o.createdAtMs >= r.finishedAtMs)?.machine;
      return {
        id: r.id,
        purpose: r.purpose === "preview" ? "preflight" : r.purpose,
        ...(node ? { node } : {}),
        startedAt: r.startedAtMs,
        endedAt: r.finishedAtMs,
        verdict: r.verdict,
        results: r.results.map((x) => ({
          binding: x.binding,
          verdict: x.outcome,
          ...(x.outcome === "pass" ? {} : { reason: x.reason }),
          // A non-passing result shows its reason beside the verdict; evidence names the object.
          // Named as a reviewer knows the object; the UID only for rows recorded without a name.
          evidence:
            `${x.outcome === "pass" ? `${x.reason}; ` : ""}${
              x.objectRef ?? x.objectUid ?? "no object"
            }` +
            (x.resourceVersion ? ` rv ${x.resourceVersion}` : ""),
        })),
      };
    });
}

/** First and last moment each phase was active for one operation. */
function phaseMoments(
  op: OperationHistory,
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
  for (const p of op.phases.slice().sort((a, b) => a.atMs - b.atMs)) touch(p.phase, p.atMs);
  for (const a of op.attempts) {
    touch(a.phase, a.sentAtMs);
    if (a.response !== null) touch(a.phase, a.response.atMs);
  }
  const opRounds = rounds.filter((r) => r.node === op.machine);
  for (const r of opRounds) {
    if (r.purpose === "gate" && r.endedAt <= op.createdAtMs) {
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
  ops: readonly OperationHistory[],
  rounds: readonly HealthRound[],
): NodeTimeline {
  // The machine's latest operation: where it stands now. A KubernetesUpgrade runs several on one
  // machine and stops at the first that does not complete, always its machine's latest, so the
  // verdict (from each node's state) sees it.
  const op = ops.findLast((o) => o.machine === n.name);
  if (!op) return { node: n.name, role: n.role, state: "pending", phases: [] };
  const moments = [...phaseMoments(op, rounds)]
    .sort((a, b) => a[1].first - b[1].first || PHASES.indexOf(a[0]) - PHASES.indexOf(b[0]));
  const live = isInFlight(op.state);
  const spans = moments.map(([phase, t], i): PhaseSpan => {
    const next = moments[i + 1];
    const isLast = next === undefined;
    const outcome = phaseOutcome(op, phase, isLast);
    const endedAt = Math.max(t.last, next?.[1].first ?? t.last);
    return isLast && live
      ? { phase, startedAt: t.first, outcome: "running" }
      : { phase, startedAt: t.first, endedAt, outcome };
  });
  const note = op.transitions.at(-1)?.reason || undefined;
  return {
    node: n.name,
    role: n.role,
    state: op.state,
    phases: spans,
    ...(note && op.state !== "completed" ? { note } : {}),
  };
}

function phaseOutcome(op: OperationHistory, phase: Phase, isLast: boolean): PhaseOutcome {
  const last = op.attempts.filter((a) => a.phase === phase).at(-1);
  if (last && last.accountedBy === null) return "unresolved";
  if (last && last.response?.class !== "accepted") return "failed";
  if (!isLast) return "ok";
  if (op.state === "unresolved") return "unresolved";
  if (op.state === "failed" || op.state === "rejected") return "failed";
  return "ok";
}

function attemptAccounts(ops: readonly OperationHistory[]): AttemptAccount[] {
  return ops.flatMap((op) => {
    const intents = op.phases.filter((p) => p.kind === "intent");
    return op.attempts.slice().sort((a, b) => a.number - b.number)
      .map((a): AttemptAccount => {
        const intent = intents.filter((p) => p.phase === a.phase && p.atMs <= a.sentAtMs)
          .sort((x, y) => x.atMs - y.atMs).at(-1);
        return {
          node: op.machine,
          phase: a.phase,
          attempt: a.number,
          intentAt: intent?.atMs ?? a.sentAtMs,
          sentAt: a.sentAtMs,
          transportDeadline: a.transportDeadlineMs,
          verificationDeadline: a.verificationDeadlineMs,
          responseClass: a.response?.class ?? null,
          accountedBy: a.accountedBy,
          ...(a.response?.detail ? { detail: a.response.detail } : {}),
        };
      });
  });
}

function recoveries(ops: readonly OperationHistory[]): RecoveryDecision[] {
  return ops.flatMap((op) =>
    op.recoveries.map((r) => ({
      at: r.atMs,
      node: op.machine,
      decision: r.kind,
      actor: r.actor,
      evidence: r.explanation ? `${r.evidence} (${r.explanation})` : r.evidence,
    }))
  ).sort((a, b) => a.at - b.at);
}

/**
 * A recovery entry since the plan was seen (a journal restore) is said first: the report was
 * built from a journal that may be behind the cluster (what ran between the backup and the
 * restore is lost to it), and the plan's approval predates the entry, so nothing of it runs again.
 */
function restoreNotes(entries: PlanHistory["recoveryEntries"]): ReasonNote[] {
  return (entries ?? []).map((e) => ({
    reason: "RecoveryEntered",
    message: `recovery mode entered at ${iso(e.atMs)} by ${e.actor} (new epoch ${e.epoch}` +
      `${e.evidence ? `: ${e.evidence}` : ""}): this report shows only what the journal ` +
      `holds since, which may be behind the cluster; the plan's approval predates it`,
    where: "journal",
  }));
}

function outcomeReasons(nodes: readonly NodeTimeline[], end?: ExecutionEnd): ReasonNote[] {
  const lines: ReasonNote[] = [];
  for (const n of nodes) {
    if (n.state === "unresolved" || n.state === "failed" || n.state === "rejected") {
      // Transition notes read `<ReasonCode>: <detail>`; a word outside the catalogue is not
      // shown as a reason code (the whole note becomes the message).
      const m = /^([A-Z][A-Za-z0-9]+): ([^]*)$/.exec(n.note ?? "");
      const code = m?.[1];
      const known = code !== undefined && isReason(code);
      lines.push({
        reason: known ? code : "ExecutionHalted",
        message: (known ? m?.[2] : n.note) ?? `operation is ${n.state}`,
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
