/**
 * The zero-write preview of a ConfigApply (docs/safeguards.md#preview-writes-nothing): through the
 * read-only guard (which refuses and counts every mutation; no apply, not even a dry run, is
 * sent), the cluster's identity and each machine's, then per node what the executor would judge
 * before its commitment (`assess.ts`: running version and mode, active and persistent
 * configuration, the whole effective diff classified for the running minor), and one health round
 * of the bound policy. Each node's changed settings and their classes are listed as checks; values
 * are never shown.
 */
import type { ConfigApplyPlan } from "../../domain/plan/schema.ts";
import type { LiveFindings } from "../../ports/reconcile.ts";
import {
  boundRound,
  clusterIdentity,
  type Findings,
  type LivePreviewDeps,
  machineIdentities,
} from "../preview/live_preview.ts";
import { isWriteRefusal, readOnlyGuard } from "../preview/read_only_guard.ts";
import { assessNode } from "./assess.ts";
import { readBoundPatch } from "./run_config_apply.ts";

/** Bound of each preview read (ms of the clock the ports run on). */
const READ_MS = 10_000;

/** Reasons that hold the plan (something unread) rather than refuse it. */
const HOLDING = new Set([
  "NodeUnreadable",
  "ConfigUnreadable",
  "ConfigActivationUnknown",
  "MachineIdentityUnreadable",
  "ClusterIdentityUnreadable",
  "HealthPolicyMissing",
  "GateUnreadable",
]);

/** Previews `plan` against the live cluster with reads only. */
export async function configApplyPreview(
  plan: ConfigApplyPlan,
  d: LivePreviewDeps,
): Promise<LiveFindings> {
  const guard = readOnlyGuard(d.cluster);
  const guarded: LivePreviewDeps = { ...d, cluster: guard };
  const f: Findings = {
    reasons: [],
    checks: [],
    safeguards: [],
    healthRounds: [],
    installers: [],
    held: false,
  };
  try {
    await clusterIdentity(plan, guard, f);
    await machineIdentities(plan, guard, f);
    await nodes(plan, guarded, f);
    await boundRound(plan, guarded, f);
  } catch (e) {
    if (!isWriteRefusal(e)) {
      f.held = true;
      f.reasons.push({
        reason: "NodeUnreadable",
        message: `live preview failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }
  const refused = guard.refused();
  const writes = refused.map((r) => `${r.port} ${r.call} ${r.target}`);
  if (refused.length > 0) {
    f.reasons.push({
      reason: "PreviewWriteRefused",
      message: `the read-only guard refused ${refused.length} mutating call(s): ${
        writes.join(", ")
      }`,
    });
  }
  if (f.reasons.some((r) => HOLDING.has(r.reason))) f.held = true;
  return {
    ...f,
    refused: f.reasons.some((r) => !HOLDING.has(r.reason)),
    reads: `it read the cluster's identity, each machine's identity, and per node the Talos ` +
      `Version and the active and persistent MachineConfigs of ${plan.spec.nodes.length} ` +
      `node(s)` + (f.healthRounds.length ? " and ran one health round" : "") +
      "; no ApplyConfiguration was sent, not even a dry run",
    writes: { count: refused.length, refused: writes },
  };
}

/** Each node judged as the executor would before its commitment; row 19 from the versions. */
async function nodes(plan: ConfigApplyPlan, d: LivePreviewDeps, f: Findings): Promise<void> {
  const patch = d.files ? await readBoundPatch(d.files, plan) : undefined;
  if (!patch || !patch.ok) {
    const message = patch ? patch.detail : "the bound files could not be read; no patch to judge";
    f.reasons.push({
      reason: patch ? patch.reason : "ConfigPatchDigestMismatch",
      message,
      where: "spec.config",
    });
    f.safeguards.push({
      id: "ClientMatchesServer",
      verdict: "unreadable",
      evidence: `not judged: ${message}`,
    });
    return;
  }
  const versions: string[] = [];
  let verdict: "pass" | "fail" | "unreadable" = "pass";
  for (const n of plan.spec.nodes) {
    const a = await assessNode(d.cluster.talos, plan, patch.patch, n, READ_MS);
    if (a.running) versions.push(`${n.name} ${a.running}`);
    const changes = a.classification?.changes ?? [];
    const listed = changes.map((c) =>
      `${c.change.path} → ${c.class}` + (c.rule ? ` (${c.rule.basis})` : "")
    ).join("; ");
    if (a.ok) {
      f.checks.push({
        name: `configuration change on ${n.name}`,
        verdict: "pass",
        detail: `${a.classification.overall}: ${listed || "no setting changes"}`,
      });
      continue;
    }
    f.checks.push({
      name: `configuration change on ${n.name}`,
      verdict: a.refused ? "fail" : "unreadable",
      detail: listed ? `${a.detail}; ${listed}` : a.detail,
    });
    f.reasons.push({ reason: a.reason, message: a.detail, where: n.name });
    const versionRow = a.reason === "NodeVersionUnexpected" ||
      a.reason === "ConfigApplyModeUnsupported" || a.reason === "ConfigApplyModeMismatch";
    if (versionRow) verdict = "fail";
    else if (a.reason === "NodeUnreadable" && verdict === "pass") verdict = "unreadable";
  }
  f.safeguards.push({
    id: "ClientMatchesServer",
    verdict,
    evidence: verdict === "pass"
      ? `every node runs ${plan.spec.talosVersion} and its minor accepts mode ${plan.spec.mode} ` +
        `for the change's class (${versions.join(", ")})`
      : verdict === "unreadable"
      ? `a node's Talos version could not be read (${versions.join(", ")})`
      : `a node's version or its minor does not accept mode ${plan.spec.mode} (${
        versions.join(", ")
      })`,
    ...(verdict === "fail" ? { reason: "SafeguardViolated" } : {}),
  });
}
