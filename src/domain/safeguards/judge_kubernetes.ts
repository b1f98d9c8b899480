/**
 * The execution rows of a KubernetesUpgrade, judged from what the journal recorded: its
 * Kubernetes checks (rows 23–25, before the rollout and before every commitment, each read
 * through a write guard whose count is recorded), its attempts (row 26: pre-pulls only as
 * attempts of committed operations, after the checks that authorised them), the phases of each
 * operation (row 20: pre-pull and configuration change attempted apart, the component observed
 * as a fact of its own) and its completion reads (row 21). Rows about an OS image, an installer
 * or a boot are not applicable, saying why. Pure.
 */
import type { RecordedKubernetesCheck, RecordedKubernetesRow, RecordedPlan } from "./recorded.ts";
import { type RowResult, rowResult } from "./result.ts";
import type { SafeguardId } from "./table.ts";

const NO_OS =
  "a KubernetesUpgrade installs no OS image and boots nothing: its components change through " +
  "the machine configuration";

/** The rows a KubernetesUpgrade's journal speaks to (these replace the TalosUpgrade judgements). */
export function judgeKubernetesExecution(record: RecordedPlan): RowResult[] {
  const checks = record.dispatchChecks
    .filter((d) => d.kubernetes !== undefined)
    .map((d) => ({ atMs: d.atMs, node: d.node, k: d.kubernetes! }));
  const ops = record.operations.slice().sort((a, b) => a.createdAtMs - b.createdAtMs);
  return [
    rowResult("SchematicPreserved", { verdict: "not-applicable", evidence: NO_OS }),
    rowResult("InstallerDigestResolved", { verdict: "not-applicable", evidence: NO_OS }),
    rowResult("InstallerImageExists", { verdict: "not-applicable", evidence: NO_OS }),
    rowResult("PhasesRecordedSeparately", phasesApart(ops)),
    rowResult("PostconditionsThenOwnedUncordon", observedThenCompleted(ops)),
    ...(["uniformOs", "skew", "ownership"] as const).map((row, i) =>
      rowResult(ROWS[i]!, checkedRow(checks, ops, row))
    ),
    rowResult("DryRunWithoutPrePull", dryRun(checks, ops)),
  ];
}

const ROWS: readonly SafeguardId[] = [
  "KubernetesAfterUniformOs",
  "KubernetesSkewChecked",
  "BootstrapOwnershipChecked",
];

type Check = { atMs: number; node: string | null; k: RecordedKubernetesCheck };
type Ops = RecordedPlan["operations"];

/**
 * A row passes when the check before the rollout passed it and every commitment was preceded by
 * a check of its own step that passed it; a refusing check fails it, a holding one leaves it
 * unreadable; with no check recorded it is not evaluated.
 */
function checkedRow(
  checks: readonly Check[],
  ops: Ops,
  row: "uniformOs" | "skew" | "ownership",
): { verdict: RowResult["verdict"]; evidence: string; reason?: string } {
  if (checks.length === 0) {
    return { verdict: "not-evaluated", evidence: "no Kubernetes check was recorded" };
  }
  const refused = checks.filter((c) => c.k[row].verdict === "refused");
  if (refused.length > 0) {
    const r: RecordedKubernetesRow = refused[0]!.k[row];
    return {
      verdict: "fail",
      evidence: `${where(refused[0]!)}: ${r.evidence}`,
      ...(r.reasons[0] ? { reason: r.reasons[0] } : {}),
    };
  }
  const held = checks.filter((c) => c.k[row].verdict === "held");
  if (held.length > 0) {
    return {
      verdict: "unreadable",
      evidence: `${where(held[0]!)}: ${held[0]!.k[row].evidence}`,
      ...(held[0]!.k[row].reasons[0] ? { reason: held[0]!.k[row].reasons[0] } : {}),
    };
  }
  const before = checks.find((c) => c.k.step === null);
  if (!before) {
    return { verdict: "not-evaluated", evidence: "no Kubernetes check before the rollout" };
  }
  const unchecked = ops.filter((o) =>
    !checks.some((c) => c.k.step === o.step && c.atMs <= o.createdAtMs)
  );
  if (unchecked.length > 0) {
    return {
      verdict: "fail",
      evidence: `committed without a passing check of its own step: ` +
        unchecked.map((o) => o.step).join(", "),
      reason: "SafeguardViolated",
    };
  }
  return {
    verdict: "pass",
    evidence: `before the rollout: ${before.k[row].evidence}; and again before each of ` +
      `${ops.length} commitment(s), on evidence read then`,
  };
}

function where(c: Check): string {
  return c.k.step === null ? "before the rollout" : `before ${c.k.step}`;
}

/** Row 26: every check wrote nothing; every pre-pull is an attempt of a committed operation. */
function dryRun(
  checks: readonly Check[],
  ops: Ops,
): { verdict: RowResult["verdict"]; evidence: string; reason?: string } {
  if (checks.length === 0) {
    return { verdict: "not-evaluated", evidence: "no Kubernetes check was recorded" };
  }
  const wrote = checks.filter((c) => c.k.writes !== 0);
  if (wrote.length > 0) {
    return {
      verdict: wrote.some((c) => c.k.writes > 0) ? "fail" : "unreadable",
      evidence: `${where(wrote[0]!)}: the check's write guard counted ` +
        (wrote[0]!.k.writes < 0 ? "nothing (not recorded)" : `${wrote[0]!.k.writes} write(s)`),
      reason: "PreviewWriteRefused",
    };
  }
  const first = Math.min(...checks.filter((c) => c.k.step === null).map((c) => c.atMs));
  const pulls = ops.flatMap((o) => o.attempts.filter((a) => a.phase === "pull"));
  const early = pulls.filter((a) => a.sentAtMs < first);
  if (early.length > 0) {
    return {
      verdict: "fail",
      evidence: `${early.length} pre-pull(s) sent before the Kubernetes check`,
      reason: "SafeguardViolated",
    };
  }
  return {
    verdict: "pass",
    evidence: `${checks.length} Kubernetes check(s) read through a write guard that counted 0 ` +
      `mutating calls (no pre-pull, no inventory or namespace created); ${pulls.length} ` +
      `pre-pull(s), each an attempt of a committed operation after its checks`,
  };
}

/** Row 20: pre-pull and configuration change attempted apart; the component observed apart. */
function phasesApart(ops: Ops): { verdict: RowResult["verdict"]; evidence: string } {
  const done = ops.filter((o) => o.state === "completed");
  if (done.length === 0) {
    return { verdict: "not-evaluated", evidence: "no operation completed yet" };
  }
  // kube-proxy is not pre-pulled (each kubelet pulls it when the DaemonSet replaces its pod).
  const bad = done.filter((o) =>
    (!o.step.endsWith("/k8s/kube-proxy") && !o.attempts.some((a) => a.phase === "pull")) ||
    !o.attempts.some((a) => a.phase === "component-config") ||
    !o.phases.some((p) => p.phase === "component-observed" && p.kind === "fact")
  );
  return bad.length
    ? {
      verdict: "fail",
      evidence: `not recorded apart on ${bad.map((o) => o.step).join(", ")}`,
    }
    : {
      verdict: "pass",
      evidence: `pre-pull (kube-proxy's none: each kubelet pulls it) and configuration change ` +
        `attempted and accounted apart, the component observed as its own fact, on ` +
        `${done.length} operation(s)`,
    };
}

/**
 * Row 21: each completed operation observed its component at the target (a `component-observed`
 * fact) before its completion read; a KubernetesUpgrade cordons nothing, so it undoes nothing.
 */
function observedThenCompleted(ops: Ops): { verdict: RowResult["verdict"]; evidence: string } {
  const done = ops.filter((o) => o.state === "completed");
  if (done.length === 0) {
    return { verdict: "not-evaluated", evidence: "no operation completed yet" };
  }
  const bad = done.filter((o) => {
    const seen = o.phases.find((p) => p.phase === "component-observed" && p.kind === "fact");
    const read = o.observations.filter((x) => x.purpose === "completion").at(-1);
    return !seen || !read || read.observedAtMs < seen.atMs;
  });
  const cordoned = ops.filter((o) => o.attempts.some((a) => a.phase === "cordon"));
  if (bad.length || cordoned.length) {
    return {
      verdict: "fail",
      evidence: [
        ...bad.map((o) => `${o.step}: completed without its component observed first`),
        ...cordoned.map((o) => `${o.step}: a cordon was attempted`),
      ].join("; "),
    };
  }
  return {
    verdict: "pass",
    evidence: `${done.length} operation(s): the component observed at the target version and ` +
      `ready before the completion read; no cordon taken, none undone`,
  };
}
