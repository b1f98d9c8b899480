/**
 * A bound evidence manifest's reading → the report's evidence section and reason lines. Pure.
 * A checked manifest lists every tuple (expected and actual hash), every assertion and every
 * control (via `evidenceOutcomeRows`); a manifest the check could not run on is one honest row
 * naming the manifest and why — unreadable when absent, fail when its bytes are wrong.
 */
import type { EvidenceReading } from "../ports/reconcile.ts";
import { evidenceOutcomeRows, type EvidenceRows } from "./from_evidence.ts";
import type { Reason, ReasonNote } from "../domain/reasons.ts";

/** Rows of a reading; the placeholder when the check could not run. */
export function evidenceReadingRows(r: EvidenceReading): EvidenceRows {
  if (r.status === "checked") return evidenceOutcomeRows(r.outcome, r.file, r.provenance ?? {});
  return {
    sourceChecks: [{
      repository: "evidence manifest (bound by the plan)",
      revision: "-",
      path: r.file,
      expectedSha256: r.expectedSha256,
      ...(r.actualSha256 ? { actualSha256: r.actualSha256 } : {}),
      verdict: r.verdict,
      reason: r.reason,
    }],
    assertions: [],
  };
}

/**
 * Reason lines for the evidence rows that did not pass, one per reason code naming its rows (a
 * held or refused preview says why without repeating the table).
 */
export function evidenceReasonLines(r: EvidenceReading): ReasonNote[] {
  if (r.status === "unread") return [{ reason: r.reason, message: r.message, where: r.file }];
  if (r.outcome.status === "refused") {
    return [{
      reason: r.outcome.problem.reason,
      message: r.outcome.problem.message,
      where: r.file,
    }];
  }
  const rows = evidenceReadingRows(r);
  const byReason = new Map<Reason, string[]>();
  const add = (reason: Reason, what: string) =>
    byReason.set(reason, [...(byReason.get(reason) ?? []), what]);
  for (const s of rows.sourceChecks) {
    if (s.verdict !== "pass") add(s.reason ?? "EvidenceHashMismatch", `${s.verdict} ${s.path}`);
  }
  for (const a of rows.assertions) {
    if (a.verdict === "pass") continue;
    const reason = a.verdict === "unreadable"
      ? "EvidenceFileMissing"
      : a.name.startsWith("control ")
      ? "EvidenceControlUnexpectedlyPassed"
      : "EvidenceAssertionFailed";
    add(reason, `${a.verdict} ${a.name}`);
  }
  return [...byReason].map(([reason, what]) => ({
    reason,
    message: `${what.length} evidence row(s): ${what.join(", ")}`,
    where: r.file,
  }));
}
