import { readerLabel } from "../safeguards/reader_rows.ts";
import type { Reason } from "../reasons.ts";
import type { HealthPolicy } from "./policy_parse.ts";
import type { BindingResult, Verdict } from "./types.ts";

/** The bounded collection interval of one round. */
export interface RoundWindow {
  readonly startedAtMs: number;
  readonly deadlineMs: number;
}

/** One evaluated round: exactly one counted result per binding, in policy order. */
export interface RoundOutcome {
  readonly policy: string;
  readonly window: RoundWindow;
  readonly verdict: Verdict;
  readonly reason: Reason;
  readonly message: string;
  readonly results: readonly BindingResult[];
}

/**
 * Evaluates a round. It passes only when every binding has a result collected inside the
 * window and every such result passes. A result from before the window or after its deadline
 * does not count (the binding becomes unreadable); if one binding was read more than once, a
 * failing reading is never masked by a passing one. Any fail makes the round fail; otherwise any
 * unreadable makes it unreadable.
 */
export function evaluateRound(
  policy: HealthPolicy,
  window: RoundWindow,
  collected: readonly BindingResult[],
): RoundOutcome {
  const results = policy.bindings.map((b) =>
    countedResult(b.name, readerLabel(b), window, collected)
  );
  const failed = results.find((r) => r.verdict === "fail");
  const unread = results.find((r) => r.verdict === "unreadable");
  const head = failed ?? unread;
  return {
    policy: policy.name,
    window,
    verdict: failed ? "fail" : unread ? "unreadable" : "pass",
    reason: head ? head.reason : "HealthCheckPassed",
    message: head
      ? `${head.binding}: ${head.message}`
      : `all ${results.length} binding(s) pass within the round`,
    results,
  };
}

/**
 * Whether a failing round failed only on nodes other than `target`: every failing binding has
 * failing findings, and each of them names one node (`Finding.node`) that is not the target. Such
 * a round shows something wrong elsewhere in the cluster (an operator's cordon of another node, a
 * neighbour NotReady), not that the target failed: a terminal state decided on it would call a
 * node that did what was asked `failed`. A binding failing on a cluster-wide finding (etcd quorum,
 * a workload, a PDB) or on coverage is laid at nobody's door, so the round stays the target's.
 */
export function failsOnlyElsewhere(outcome: RoundOutcome, target: string): boolean {
  if (outcome.verdict !== "fail") return false;
  return outcome.results.every((r) => {
    if (r.verdict !== "fail") return true;
    const failing = r.findings.filter((f) => f.verdict === "fail");
    return failing.length > 0 &&
      failing.every((f) => f.node !== undefined && f.node !== target);
  });
}

function countedResult(
  name: string,
  reader: string,
  w: RoundWindow,
  collected: readonly BindingResult[],
): BindingResult {
  const mine = collected.filter((r) => r.binding === name);
  const inWindow = mine.filter((r) =>
    r.startedAtMs >= w.startedAtMs && r.completedAtMs <= w.deadlineMs
  );
  const failing = inWindow.find((r) => r.verdict === "fail");
  if (failing) return failing;
  const last = inWindow.at(-1);
  if (last) return last;
  const late = mine.find((r) => r.completedAtMs > w.deadlineMs);
  return {
    binding: name,
    reader,
    verdict: "unreadable",
    reason: late ? "HealthRoundLate" : "HealthResultMissing",
    message: late ? "result arrived after the round closed" : "no result collected in this round",
    coverage: { required: 0, observed: 0 },
    findings: [],
    basis: [],
    startedAtMs: w.startedAtMs,
    completedAtMs: w.deadlineMs,
  };
}

/**
 * The gate's verdict over a sequence of rounds: only the latest complete round counts. An
 * earlier passing round never stands in for a later failing or unreadable one.
 */
export function gateVerdict(rounds: readonly RoundOutcome[]): Verdict {
  return rounds.at(-1)?.verdict ?? "unreadable";
}

/** One result row for the journal (`health_results`). */
export interface JournalResultRow {
  readonly binding: string;
  /** The reader label (`readerLabel`): which safeguard row the result evaluates. */
  readonly reader: string;
  readonly outcome: Verdict;
  readonly reason: Reason;
  readonly objectUid?: string;
  /** How a reviewer names the object: `Kind namespace/name`, or `Kind name` cluster-scoped. */
  readonly objectRef?: string;
  readonly resourceVersion?: string;
  readonly observedAtMs: number;
}

/** Flattens a round into journal rows: one row per basis object (or one per binding without basis). */
export function journalRows(outcome: RoundOutcome): JournalResultRow[] {
  return outcome.results.flatMap((r) =>
    r.basis.length === 0
      ? [{
        binding: r.binding,
        reader: r.reader,
        outcome: r.verdict,
        reason: r.reason,
        observedAtMs: r.completedAtMs,
      }]
      : r.basis.map((b) => ({
        binding: r.binding,
        reader: r.reader,
        outcome: r.verdict,
        reason: r.reason,
        ...(b.uid ? { objectUid: b.uid } : {}),
        ...(b.name ? { objectRef: objectRef(b) } : {}),
        ...(b.resourceVersion ? { resourceVersion: b.resourceVersion } : {}),
        observedAtMs: b.observedAtMs,
      }))
  );
}

/** `Deployment apps/web`, or `Node worker-1` for a cluster-scoped object. */
export function objectRef(
  b: { readonly kind: string; readonly name: string; readonly namespace?: string },
): string {
  return `${b.kind} ${b.namespace ? `${b.namespace}/` : ""}${b.name}`;
}
