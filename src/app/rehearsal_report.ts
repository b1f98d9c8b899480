/**
 * The execution report of a rehearsal: rendered from the rehearsal's journal by the same renderer
 * a real run publishes with, so a practice run reads exactly like the real one would.
 */
import type { Journal } from "../ports/journal.ts";
import type { ExecutionEnd, PlanFacts } from "../ports/reconcile.ts";
import type { ParsedPlan } from "../domain/plan/parse.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";
import type { ReasonNote } from "../domain/reasons.ts";
import { reconcileReports } from "../report/reconcile_reports.ts";

/** What the report needs to know about the rehearsal beyond its journal. */
export interface RehearsalReportInput {
  readonly journal: Journal;
  readonly parsed: ParsedPlan;
  /** The plan file as given on the command line (shown as the plan's path). */
  readonly planPath: string;
  readonly requiredApprovals: number;
  readonly outcome: RolloutOutcome;
  /** Epoch ms from the twin's clock: the only "now" the report sees. */
  readonly generatedAt: number;
}

/** Renders `execution.md` for a finished (or stopped) rehearsal. */
export async function rehearsalReport(r: RehearsalReportInput): Promise<string> {
  const facts: PlanFacts = {
    name: r.parsed.plan.metadata.name,
    path: r.planPath,
    branch: "rehearsal",
    commit: "rehearsal",
    digest: r.parsed.sha256,
    plan: r.parsed.plan,
    problems: [],
    requiredApprovals: r.requiredApprovals,
    refusals: [],
  };
  const chain = await r.journal.verifyChain();
  // The reasons a node did not complete, as a real run's report gives them.
  const reasons: ReasonNote[] = r.outcome.nodes.filter((n) => n.state !== "completed").map((n) => ({
    reason: n.reason,
    message: n.detail,
    where: n.node,
  }));
  const end: ExecutionEnd = { state: r.outcome.state, reasons };
  return reconcileReports().execution({
    facts,
    history: await r.journal.planHistory(r.parsed.sha256),
    head: chain.ok
      ? { hash: chain.head, events: chain.rows }
      : { hash: `chain broken at seq ${chain.seq}: ${chain.why}`, events: 0 },
    generatedAt: r.generatedAt,
    end,
  });
}
