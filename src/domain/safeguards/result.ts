/**
 * One safeguard row's result, and the complete set of rows a report shows. A row is `pass` or
 * `fail` only on evidence that says so; a read that did not answer is `unreadable`; a row nobody
 * evaluated is `not-evaluated` with why (the missing reader, the missing record), never a pass;
 * `not-applicable` carries the evidence that the safeguard cannot apply to this plan.
 */
import { type SafeguardId, SAFEGUARDS } from "./table.ts";
import type { Verdict } from "../verdict.ts";

/** A safeguard row's verdict. */
export type RowVerdict = Verdict | "not-evaluated" | "not-applicable";

/** Every row verdict, in the order reports count them. */
export const ROW_VERDICTS: readonly RowVerdict[] = [
  "pass",
  "fail",
  "unreadable",
  "not-evaluated",
  "not-applicable",
];

/** One safeguard row's result. */
export interface RowResult {
  readonly id: SafeguardId;
  readonly verdict: RowVerdict;
  /** What was seen (or, for `not-evaluated`, what is missing), free of secrets. */
  readonly evidence: string;
  /** Reason code of a non-passing verdict. */
  readonly reason?: string;
}

/** A judgement before it is tied to a row. */
export type Judged = Omit<RowResult, "id">;

/** Ties a judgement to its row. */
export function rowResult(id: SafeguardId, j: Judged): RowResult {
  return {
    id,
    verdict: j.verdict,
    evidence: j.evidence,
    ...(j.reason !== undefined ? { reason: j.reason } : {}),
  };
}

/**
 * One result per table row, in table order. Later layers override earlier ones (plan checks,
 * then live or journal evidence), except that "not evaluated" never hides an evaluation; a row
 * no layer judged is `not-evaluated` saying so.
 */
export function completeRows(...layers: readonly (readonly RowResult[])[]): RowResult[] {
  const byId = new Map<SafeguardId, RowResult>();
  for (const layer of layers) {
    for (const r of layer) {
      if (r.verdict === "not-evaluated" && byId.has(r.id)) continue;
      byId.set(r.id, r);
    }
  }
  const row3 = byId.get("InstallerDigestResolved");
  const row10 = byId.get("InstallerImageExists");
  if (row3 && row10) byId.set(row3.id, boundByResolution(row3, row10));
  return SAFEGUARDS.map((s) =>
    byId.get(s.id) ?? { id: s.id, verdict: "not-evaluated", evidence: "no result recorded" }
  );
}

const SEVERITY: Readonly<Record<RowVerdict, number>> = {
  "not-applicable": 0,
  pass: 1,
  "not-evaluated": 2,
  unreadable: 3,
  fail: 4,
};

/**
 * Row 3 (installer image resolved to a registry digest) cannot pass on the plan checks alone:
 * they see only the reference's shape (tag, path, schematic, a pinned digest). The resolution at
 * the registry is row 10's record (the preview's own, or the dispatch check's before each
 * commitment); row 3 passes only when both do, and otherwise takes the worse verdict, saying why.
 */
function boundByResolution(row3: RowResult, row10: RowResult): RowResult {
  if (row3.verdict === "not-applicable" || row10.verdict === "not-applicable") return row3;
  if (row10.verdict === "pass") {
    return {
      ...row3,
      evidence: `${row3.evidence}; its pinned digest resolved at the registry (row 10)`,
    };
  }
  if (SEVERITY[row3.verdict] >= SEVERITY[row10.verdict]) return row3;
  return {
    id: row3.id,
    verdict: row10.verdict,
    evidence:
      `${row3.evidence}, but the registry resolution did not pass: ${row10.evidence} (row 10)`,
    ...(row10.reason !== undefined ? { reason: row10.reason } : {}),
  };
}
