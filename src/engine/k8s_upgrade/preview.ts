/**
 * The zero-write preview of a KubernetesUpgrade (docs/safeguards.md#preview-writes-nothing):
 * the preflight's facts read through the read-only guard (which refuses and counts every
 * mutation), judged for rows 23–25, the dry-run row 26 from the guard's count (no pre-pull, no
 * inventory or namespace creation: nothing but reads was issued), and one health round of the
 * bound policy. A missing inventory ConfigMap or namespace stays missing.
 */
import { judgePreflight, type RowFinding } from "../../domain/k8s_upgrade/preflight.ts";
import type { KubernetesUpgradePlan } from "../../domain/plan/schema.ts";
import type { ReasonNote } from "../../domain/reasons.ts";
import type { LiveFindings, LiveSafeguard } from "../../ports/reconcile.ts";
import {
  boundRound,
  clusterIdentity,
  type Findings,
  type LivePreviewDeps,
  machineIdentities,
} from "../preview/live_preview.ts";
import { isWriteRefusal, readOnlyGuard } from "../preview/read_only_guard.ts";
import { readPreflightEvidence } from "./read_evidence.ts";

/** Bound of each preview read (ms of the clock the ports run on). */
const READ_MS = 10_000;

function row(id: string, r: RowFinding): LiveSafeguard {
  return {
    id,
    verdict: r.verdict === "pass" ? "pass" : r.verdict === "held" ? "unreadable" : "fail",
    evidence: r.evidence,
    ...(r.problems[0] ? { reason: r.problems[0].reason } : {}),
  };
}

function notes(r: RowFinding, where: string): ReasonNote[] {
  return r.problems.map((p) => ({ reason: p.reason, message: p.message, where }));
}

/** Previews `plan` against the live cluster with reads only. */
export async function kubernetesPreview(
  plan: KubernetesUpgradePlan,
  d: LivePreviewDeps,
): Promise<LiveFindings> {
  const guard = readOnlyGuard(d.cluster);
  const f: Findings = {
    reasons: [],
    checks: [],
    safeguards: [],
    healthRounds: [],
    installers: [],
    held: false,
  };
  try {
    // The facts below are the plan's only if they were read from the plan's cluster.
    await clusterIdentity(plan, guard, f);
    await machineIdentities(plan, guard, f);
    // A KubernetesUpgrade installs no OS image and boots nothing.
    for (const id of ["SchematicPreserved", "InstallerDigestResolved", "InstallerImageExists"]) {
      f.safeguards.push({
        id,
        verdict: "not-applicable",
        evidence: "a KubernetesUpgrade installs no OS image and boots nothing: its components " +
          "change through the machine configuration",
      });
    }
    const e = await readPreflightEvidence(
      { kube: guard.kube, talos: guard.talos, ...(d.journal ? { journal: d.journal } : {}) },
      { cluster: plan.metadata.cluster, nodes: plan.spec.nodes },
      READ_MS,
    );
    const j = judgePreflight(plan.spec, e, { expectFrom: true });
    f.safeguards.push(
      row("KubernetesAfterUniformOs", j.uniformOs),
      row("KubernetesSkewChecked", j.skew),
      row("BootstrapOwnershipChecked", j.ownership),
    );
    f.reasons.push(
      ...notes(j.uniformOs, "spec.talosVersion"),
      ...notes(j.skew, "spec.to"),
      ...notes(j.ownership, "bootstrap manifests"),
    );
    for (const c of e.components) {
      f.checks.push({
        name: `${c.component} on ${c.node}`,
        verdict: c.version === undefined ? "unreadable" : "pass",
        detail: c.version ?? "version not read",
      });
    }
    if (j.verdict === "held") f.held = true;
    await boundRound(plan, { ...d, cluster: guard }, f);
  } catch (e) {
    if (!isWriteRefusal(e)) {
      f.held = true;
      f.reasons.push({
        reason: "KubernetesEvidenceUnreadable",
        message: `live preview failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }
  const refused = guard.refused();
  const writes = refused.map((r) => `${r.port} ${r.call} ${r.target}`);
  f.safeguards.push({
    id: "DryRunWithoutPrePull",
    verdict: refused.length === 0 ? "pass" : "fail",
    evidence: refused.length === 0
      ? "the preview issued reads only (Talos Version and COSI Get; Kubernetes GET, LIST and " +
        "/metrics): no image pre-pull, no configuration apply, no inventory or namespace " +
        "creation; the read-only guard counted 0 mutating calls"
      : `the read-only guard refused ${refused.length} mutating call(s): ${writes.join(", ")}`,
    ...(refused.length ? { reason: "PreviewWriteRefused" } : {}),
  });
  if (refused.length > 0) {
    f.reasons.push({
      reason: "PreviewWriteRefused",
      message: `the read-only guard refused ${refused.length} mutating call(s): ${
        writes.join(", ")
      }`,
    });
  }
  const holding = new Set([
    "KubernetesEvidenceUnreadable",
    "KubernetesSupportUnknown",
    "ClusterIdentityUnreadable",
  ]);
  if (f.reasons.some((r) => holding.has(r.reason))) f.held = true;
  return {
    ...f,
    refused: f.reasons.some((r) =>
      !holding.has(r.reason) && r.reason !== "HealthPolicyMissing" && r.reason !== "GateUnreadable"
    ),
    reads: `it read the Talos Version of ${plan.spec.nodes.length} node(s), each control ` +
      `plane's static pod statuses, each Node's kubelet version, kube-proxy's DaemonSet, the ` +
      `apiserver's deprecated-API gauge, the bootstrap inventory and the objects it lists ` +
      `(managedFields)` + (f.healthRounds.length ? " and ran one health round" : "") +
      "; the journal " + (d.journal ? "was read for partial OS rollouts" : "was not available"),
    writes: { count: refused.length, refused: writes },
  };
}
