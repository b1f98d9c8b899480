/**
 * The headline follows from the rows, always. An execution is `completed` only when every
 * operation completed AND every applicable row passed; a preview is `ready` only when every
 * P-placed row was evaluated and passed. Anything else names the rows that stand in the way.
 */
import type { RolloutEnd } from "../operation.ts";
import type { RowResult } from "./result.ts";
import { rowNumber, rowOf, type SafeguardId } from "./table.ts";

/** A row that keeps a headline from its best word. */
export interface RowGap {
  readonly number: number;
  readonly id: SafeguardId;
  readonly verdict: "fail" | "unreadable" | "not-evaluated";
  readonly evidence: string;
}

/** The rows in the way, failures apart from rows nobody could judge. */
export interface RowGaps {
  readonly failed: readonly RowGap[];
  /** `not-evaluated` and `unreadable` rows: nothing was seen to pass. */
  readonly unevaluated: readonly RowGap[];
}

/** Gaps among `rows` for which `inScope` holds; `not-applicable` rows are never gaps. */
export function rowGaps(
  rows: readonly RowResult[],
  inScope: (id: SafeguardId) => boolean = () => true,
): RowGaps {
  const gaps = rows.filter((r) => inScope(r.id))
    .flatMap((r): RowGap[] =>
      r.verdict === "pass" || r.verdict === "not-applicable"
        ? []
        : [{ number: rowNumber(r.id), id: r.id, verdict: r.verdict, evidence: r.evidence }]
    ).sort((a, b) => a.number - b.number);
  return {
    failed: gaps.filter((g) => g.verdict === "fail"),
    unevaluated: gaps.filter((g) => g.verdict !== "fail"),
  };
}

/** Whether there is nothing in the way. */
export function noGaps(g: RowGaps): boolean {
  return g.failed.length === 0 && g.unevaluated.length === 0;
}

/** How the operations of a plan ended (ER's classification, across its nodes). */
export type OperationsOutcome =
  | "running"
  | "held"
  /** A check re-run at the point of dispatch refused; nothing was sent to the next node. */
  | "refused"
  | "completed"
  | "failed"
  | "unresolved"
  | "rejected"
  | "cancelled";

/**
 * How a plan's operations stand, from each plan node's operation state (`pending`: none yet) and
 * how the executor ended, if it did. Any unresolved operation makes the whole unresolved; a halt
 * before the next commitment is `held` (nothing was sent for that node, so not `failed`).
 */
export function operationsOutcome(
  states: readonly string[],
  ended?: RolloutEnd,
): OperationsOutcome {
  const has = (s: string) => states.includes(s);
  if (has("unresolved")) return "unresolved";
  if (has("failed")) return "failed";
  if (has("rejected")) return "rejected";
  if (has("cancelled")) return "cancelled";
  if (states.length > 0 && states.every((s) => s === "completed")) return "completed";
  if (ended === "halted") return "held";
  // Refused at dispatch (plan-level, or before a later node): nothing was sent for that node.
  if (ended === "refused") return "refused";
  return "running";
}

/**
 * The execution's verdict: the operations' outcome, except that `completed` operations with a
 * failing row are `safeguard-failed` and with an unevaluated (or unreadable) row `unverified`.
 */
export type ExecutionVerdict =
  | Exclude<OperationsOutcome, "completed">
  | "completed"
  | "safeguard-failed"
  | "unverified";

/** The verdict of an execution and the rows behind it. */
export function executionVerdict(
  outcome: OperationsOutcome,
  rows: readonly RowResult[],
): { readonly verdict: ExecutionVerdict; readonly gaps: RowGaps } {
  const gaps = rowGaps(rows);
  if (outcome !== "completed") return { verdict: outcome, gaps };
  if (gaps.failed.length > 0) return { verdict: "safeguard-failed", gaps };
  if (gaps.unevaluated.length > 0) return { verdict: "unverified", gaps };
  return { verdict: "completed", gaps };
}

/** What the plan-branch checks decided before looking at the rows. */
export type PreviewBase = "ready" | "refused" | "held";

/** A preview's verdict: `not-ready` when the checks passed but a P-placed row did not. */
export type PreviewVerdict = PreviewBase | "not-ready";

/** Rows placed at plan validation (P): the ones a preview must evaluate. */
export function isPlanPlaced(id: SafeguardId): boolean {
  return rowOf(id).placement.includes("P");
}

/** The verdict of a preview and the P-placed rows behind it. */
export function previewVerdict(
  base: PreviewBase,
  rows: readonly RowResult[],
): { readonly verdict: PreviewVerdict; readonly gaps: RowGaps } {
  const gaps = rowGaps(rows, isPlanPlaced);
  if (base !== "ready") return { verdict: base, gaps };
  return { verdict: noGaps(gaps) ? "ready" : "not-ready", gaps };
}
