/**
 * The zero-write preview of a TalosUpgrade plan against the live cluster
 * (docs/safeguards.md#preview-writes-nothing: no pre-pull, no inventory or namespace creation, no
 * cordon): the Talos version of every node against the first hop, a drain plan per node (drain
 * bound vs the grace periods of the pods it would evict), and one health round of the policy, not
 * recorded. Reads only: Talos Version and Kubernetes get/list/watch, through a guard that refuses and
 * counts any mutation (`read_only_guard.ts`). Shared by `cairn plan preview`
 * and the reconcile loop's plan-branch previews; time comes from the clock passed in. Not a
 * command.
 */
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import type { BoundFileSource, InstallerResolver } from "../../ports/dispatch.ts";
import { boundHealthPolicy } from "../authorize/bound_policy.ts";
import { talosClusterIdentity } from "../authorize/cluster_identity.ts";
import { resolveInstallers } from "../authorize/installer_check.ts";
import type { InstallerRecord } from "../../domain/safeguards/judge_installer.ts";
import {
  judgeRunningSchematics,
  type RunningSchematic,
} from "../../domain/safeguards/judge_preview.ts";
import { SCHEMATIC_ANNOTATION } from "../executor/verify_phase.ts";
import type { RoundOutcome } from "../../domain/health/round.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type {
  ConfigApplyPlan,
  KubernetesUpgradePlan,
  TalosUpgradePlan,
} from "../../domain/plan/schema.ts";
import { planDrain } from "../drain_plan.ts";
import { collectRound } from "../health_round.ts";
import { isWriteRefusal, readOnlyGuard } from "./read_only_guard.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Journal } from "../../ports/journal.ts";
import type { KubeEvidence } from "../health/kube_evidence.ts";
import type {
  LiveCheck,
  LiveFindings,
  LiveHealthRound,
  LivePreviewer,
  LiveSafeguard,
} from "../../ports/reconcile.ts";
import type { ReasonNote } from "../../domain/reasons.ts";
import type { Talos } from "../../ports/talos.ts";
import {
  identityRecord,
  judgeIdentity,
  SYSTEM_INFORMATION,
  uuidFromNode,
  uuidFromSystemInformation,
  type UuidReading,
} from "../../domain/machine_identity.ts";

/** The read side of a cluster connection. */
export interface LiveCluster {
  readonly kube: Kube;
  readonly talos: Talos;
}

/** What the live preview reads with. */
export interface LivePreviewDeps {
  readonly cluster: LiveCluster;
  /** Times the health round; must not move the cluster's time (the twin's timeout view). */
  readonly clock: Clock;
  /** Resolves each hop's installer for the plan's platform; absent: recorded as not resolved. */
  readonly installers?: InstallerResolver;
  /**
   * The plan's bound files as the previewed branch or working tree has them; the health round
   * uses the bound policy from here (digest verified). Absent: the preview says it ran no round.
   */
  readonly files?: BoundFileSource;
  /**
   * The journal, read for partial OS rollouts (a KubernetesUpgrade's row 23); absent: that fact
   * is unread and holds the plan.
   */
  readonly journal?: Pick<Journal, "listOperations" | "getPlan">;
  /**
   * Watch caches kept beyond this preview (the reconcile loop's, shared with its runs): the
   * preview's round lists into them and leaves them watching, so the run after the merge finds
   * them current. Absent: the round's own caches, stopped when it ends.
   */
  readonly watchCaches?: KubeEvidence;
}

/** Reason codes of reads that did not answer: they hold a plan, they never refuse it. */
const UNREADABLE: ReadonlySet<string> = new Set([
  "NodeUnreadable",
  "GateUnreadable",
  "HealthPolicyMissing",
  "ClusterIdentityUnreadable",
  "MachineIdentityUnreadable",
  "RegistryUnreadable",
]);

/** What the steps found so far. */
export interface Findings {
  reasons: ReasonNote[];
  checks: LiveCheck[];
  safeguards: LiveSafeguard[];
  healthRounds: LiveHealthRound[];
  installers: InstallerRecord[];
  held: boolean;
}

/** One step of the live preview; it reads through the guarded cluster in `d`. */
export type LiveStep = (plan: TalosUpgradePlan, d: LivePreviewDeps, f: Findings) => Promise<void>;

/** The preview's steps, in order. */
const STEPS: readonly LiveStep[] = [
  (plan, d, f) => clusterIdentity(plan, d.cluster, f),
  (plan, d, f) => nodeVersions(plan, d.cluster, f),
  (plan, d, f) => machineIdentities(plan, d.cluster, f),
  (plan, d, f) => runningSchematics(plan, d.cluster, f),
  (plan, d, f) => drainPlanning(plan, d.cluster, f),
  (plan, d, f) => installers(plan, d.installers, f),
  (plan, d, f) => boundRound(plan, d, f),
];

/**
 * Runs every live check of `plan` through the read-only guard. The health round uses the policy
 * the plan binds (read through `files`, digest verified); when it cannot, the preview says why and
 * holds or refuses — it never skips health silently.
 */
export function livePreview(
  plan: TalosUpgradePlan,
  d: LivePreviewDeps,
  files?: BoundFileSource,
): Promise<LiveFindings> {
  return runGuarded(plan, files ? { ...d, files } : d, STEPS);
}

/**
 * Runs `steps` with the cluster wrapped in the read-only guard: a mutation is refused before it
 * is sent, counted, and ends the preview with `PreviewWriteRefused`; the count is the report's.
 */
export async function runGuarded(
  plan: TalosUpgradePlan,
  d: LivePreviewDeps,
  steps: readonly LiveStep[],
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
    for (const step of steps) await step(plan, guarded, f);
  } catch (e) {
    // A refusal ends the preview (it is reported below, from the guard's count); any other
    // failure holds the plan: what was not read cannot pass.
    if (!isWriteRefusal(e)) {
      f.held = true;
      f.reasons.push({
        reason: "NodeUnreadable",
        message: `live preview failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }
  // Counted by the guard, so a refusal a step caught and swallowed still counts.
  const refused = guard.refused();
  if (refused.length > 0) {
    f.reasons.push({
      reason: "PreviewWriteRefused",
      message: `the read-only guard refused ${refused.length} mutating call(s): ` +
        refused.map((r) => `${r.port} ${r.call} ${r.target}`).join(", "),
    });
  }
  if (f.reasons.some((r) => UNREADABLE.has(r.reason))) f.held = true;
  const rounds = f.healthRounds.length;
  return {
    ...f,
    refused: f.reasons.some((r) => !UNREADABLE.has(r.reason)),
    reads: `it read the cluster's identity, the Talos Version and each machine's identity ` +
      `(Node systemUUID, Talos SystemInformation at the declared address) of ` +
      `${plan.spec.nodes.length} node(s), listed pods per node` +
      (d.installers ? `, resolved ${plan.spec.hops.length} installer reference(s)` : "") +
      (rounds ? " and ran one health round (get/list/watch only, not recorded)" : ""),
    writes: {
      count: refused.length,
      refused: refused.map((r) => `${r.port} ${r.call} ${r.target}`),
    },
  };
}

/** The LivePreviewer port: TalosUpgrade plans are checked; other kinds have no live checks. */
export function livePreviewer(d: LivePreviewDeps): LivePreviewer {
  return {
    preview: (parsed: ParsedPlan, files: BoundFileSource) =>
      parsed.plan.kind === "TalosUpgrade"
        ? livePreview(parsed.plan, d, files)
        : parsed.plan.kind === "ConfigApply"
        ? import("../config_apply/preview.ts").then((m) =>
          m.configApplyPreview(parsed.plan as ConfigApplyPlan, { ...d, files })
        )
        : parsed.plan.kind === "KubernetesUpgrade"
        ? import("../k8s_upgrade/preview.ts").then((m) =>
          m.kubernetesPreview(parsed.plan as KubernetesUpgradePlan, { ...d, files })
        )
        : Promise.resolve({
          reasons: [],
          checks: [],
          safeguards: [],
          healthRounds: [],
          held: false,
          refused: false,
          reads: `no live checks exist yet for ${parsed.plan.kind}; nothing was read`,
          writes: { count: 0, refused: [] },
        }),
  };
}

/** The plan's cluster against the name the cluster reports (read from the first node). */
export async function clusterIdentity(plan: GatedPlan, cluster: LiveCluster, f: Findings) {
  // Asked at the first node's declared address: the machine a commitment would reach.
  const node = plan.spec.nodes[0]!.address;
  try {
    const seen = await talosClusterIdentity(cluster.talos, 10_000).read(node);
    const ok = seen.name === plan.metadata.cluster;
    const detail = `the cluster reports ${seen.name} (${seen.source}); the plan is for ` +
      plan.metadata.cluster;
    f.checks.push({ name: "cluster identity", verdict: ok ? "pass" : "fail", detail });
    if (!ok) f.reasons.push({ reason: "ClusterIdentityMismatch", message: detail, where: node });
  } catch (e) {
    const detail = `the cluster's identity could not be read from ${node}: ${e}`;
    f.checks.push({ name: "cluster identity", verdict: "unreadable", detail });
    f.reasons.push({ reason: "ClusterIdentityUnreadable", message: detail, where: node });
  }
}

/** Each hop's installer resolved for the plan's platform (never a pass unless it matched). */
async function installers(
  plan: TalosUpgradePlan,
  resolver: InstallerResolver | undefined,
  f: Findings,
) {
  for (const i of await resolveInstallers(plan, resolver)) {
    f.installers.push({
      hop: i.hop,
      reference: i.reference,
      pinned: i.pinned,
      platform: i.platform,
      verdict: i.item.verdict,
      reason: i.item.reason ?? null,
      digest: i.resolved?.digest ?? null,
      indexDigest: i.resolved?.indexDigest ?? null,
    });
    f.checks.push({
      name: `installer of hop ${i.hop} (${i.platform})`,
      verdict: i.item.verdict === "not-evaluated" ? "unreadable" : i.item.verdict,
      detail: i.item.detail,
    });
    if (i.item.reason) {
      f.reasons.push({
        reason: i.item.reason,
        message: i.item.detail,
        where: `spec.hops.${i.hop}.installer.image`,
      });
    }
  }
}

/** A plan kind whose nodes the preview's health round gates. */
export type GatedPlan = TalosUpgradePlan | KubernetesUpgradePlan | ConfigApplyPlan;

/** The health round under the bound policy, or why there was none (never skipped silently). */
export async function boundRound(plan: GatedPlan, d: LivePreviewDeps, f: Findings) {
  const bound = plan.spec.healthPolicy;
  const p = d.files ? await boundHealthPolicy(plan, d.files) : {
    ok: false as const,
    reason: "HealthPolicyMissing" as const,
    message: "no repository was given",
  };
  if (p.ok) return await healthRound(plan, d, p.policy, f);
  const evidence = `no health round: the bound policy ${bound.path} (sha256 ${bound.sha256}) ` +
    `could not be used from ${d.files?.describe() ?? "(no repository)"}: ${p.message}`;
  f.safeguards.push({ id: "ClusterGate", verdict: "unreadable", evidence, reason: p.reason });
  f.reasons.push({ reason: p.reason, message: evidence, where: "spec.healthPolicy" });
}

async function nodeVersions(plan: TalosUpgradePlan, cluster: LiveCluster, f: Findings) {
  const from = plan.spec.hops[0]!.from;
  let unreadable = 0;
  for (const n of plan.spec.nodes) {
    let tag: string;
    try {
      tag = (await cluster.talos.version(n.address, { timeoutMs: 10_000 })).tag;
    } catch (e) {
      unreadable++;
      f.reasons.push({ reason: "NodeUnreadable", message: String(e), where: n.name });
      continue;
    }
    const ok = tag === from;
    const detail = `${n.name} runs ${tag}, plan expects ${from}`;
    f.checks.push({
      name: `${n.name} runs the first hop's source version`,
      verdict: ok ? "pass" : "fail",
      detail,
    });
    if (!ok) f.reasons.push({ reason: "NodeVersionUnexpected", message: detail, where: n.name });
  }
  if (unreadable > 0) f.held = true;
}

/**
 * Row 1: each plan node is one machine at its declared address — the Kubernetes Node's
 * `systemUUID` equals the SMBIOS UUID Talos reports at the plan's address (the same judgement the
 * executor binds at commitment, with nothing committed yet). Another machine at an address
 * refuses the plan; an identity that cannot be read holds it.
 */
export async function machineIdentities(plan: GatedPlan, cluster: LiveCluster, f: Findings) {
  let mismatched = 0, unreadable = 0;
  const machines: string[] = [];
  for (const n of plan.spec.nodes) {
    const kube = await cluster.kube.getNode(n.name, { timeoutMs: 10_000 }).then(
      (node): UuidReading =>
        node ? uuidFromNode(node.systemUUID) : { ok: false, error: `node ${n.name} not found` },
      (e): UuidReading => ({ ok: false, error: String(e) }),
    );
    const talos = await cluster.talos.resource(n.address, SYSTEM_INFORMATION, { timeoutMs: 10_000 })
      .then(
        (r) => uuidFromSystemInformation(r.yamlSpec),
        (e): UuidReading => ({ ok: false, error: String(e) }),
      );
    const v = judgeIdentity({ node: n.name, address: n.address, kube, talos });
    if (v.ok) {
      machines.push(identityRecord(v.identity));
      continue;
    }
    if (v.reason === "MachineIdentityUnreadable") unreadable++;
    else mismatched++;
    f.reasons.push({ reason: v.reason, message: v.detail, where: n.name });
  }
  if (unreadable > 0) f.held = true;
  f.safeguards.push({
    id: "NodeIdentityBound",
    verdict: unreadable > 0 ? "unreadable" : mismatched > 0 ? "fail" : "pass",
    evidence: mismatched + unreadable === 0
      ? `${machines.length} node(s), each one machine on both sides at its declared address ` +
        `(Node systemUUID = Talos SystemInformation uuid): ${machines.join("; ")}`
      : `${mismatched} node(s) with another machine at the declared address, ${unreadable} ` +
        "unreadable",
  });
}

/** Row 2: each node's running schematic (published on its Node object) against the hops. */
async function runningSchematics(plan: TalosUpgradePlan, cluster: LiveCluster, f: Findings) {
  const running: RunningSchematic[] = [];
  for (const n of plan.spec.nodes) {
    const node = await cluster.kube.getNode(n.name).catch(() => undefined);
    running.push({ node: n.name, schematic: node?.annotations[SCHEMATIC_ANNOTATION] });
  }
  const hops = plan.spec.hops.map((h) => ({ to: h.to, schematic: h.installer.schematic }));
  const j = judgeRunningSchematics(hops, running);
  if (j.verdict === "unreadable") f.held = true;
  f.safeguards.push({
    id: "SchematicPreserved",
    verdict: j.verdict === "not-evaluated" || j.verdict === "not-applicable"
      ? "unreadable"
      : j.verdict,
    evidence: j.evidence,
    ...(j.reason ? { reason: j.reason } : {}),
  });
}

async function drainPlanning(plan: TalosUpgradePlan, cluster: LiveCluster, f: Findings) {
  const bound = plan.spec.phases.drainTimeoutSeconds;
  const partial = plan.spec.recovery.some((r) => r.action === "partialDrain");
  let refused = 0;
  for (const n of plan.spec.nodes) {
    const pods = (await cluster.kube.listPods(n.name)).items;
    const d = planDrain({
      node: n.name,
      pods,
      drainBoundSeconds: bound,
      partialDrainAuthorized: partial,
    });
    const blockers = d.blockers.map((b) =>
      `${b.pod.namespace}/${b.pod.name} ${b.reason} (${b.graceSeconds}s)`
    );
    f.checks.push({
      name: `drain planning ${n.name}`,
      verdict: d.verdict === "refused" ? "fail" : "pass",
      detail: `drain plan ${d.verdict}: ${d.evict.length} pod(s) to evict, longest grace ` +
        `${d.longestGraceSeconds}s, bound ${bound}s` +
        (blockers.length ? `; ${blockers.join(", ")}` : ""),
    });
    if (d.verdict !== "refused") continue;
    refused++;
    f.reasons.push({
      reason: "DrainBoundTooShort",
      message: `drain of ${n.name} refused: ${blockers.join(", ")}`,
      where: n.name,
    });
  }
  f.safeguards.push({
    id: "DisruptionBudgetsAudited",
    verdict: refused > 0 ? "fail" : "pass",
    evidence: `drain planned for ${plan.spec.nodes.length} node(s) against a ${bound}s bound` +
      `${partial ? " with a reviewed partial-drain entry" : ""}: ${refused} refused`,
  });
}

async function healthRound(
  plan: GatedPlan,
  d: LivePreviewDeps,
  policy: HealthPolicy,
  f: Findings,
) {
  const { ClusterEvidence } = await import("../health/cluster_evidence.ts");
  const evidence = new ClusterEvidence(
    d.cluster.kube,
    d.cluster.talos,
    d.clock,
    new Map(plan.spec.nodes.map((n) => [n.name, n.address])),
    undefined,
    d.watchCaches,
  );
  let out: RoundOutcome;
  try {
    out = await collectRound({ clock: d.clock, evidence }, policy, { intervalMs: 30_000 });
  } finally {
    evidence.stop();
  }
  f.healthRounds.push({
    startedAt: out.window.startedAtMs,
    endedAt: d.clock.now(),
    verdict: out.verdict,
    results: out.results.map((r) => ({
      binding: r.binding,
      reader: r.reader,
      verdict: r.verdict,
      reason: r.reason,
      evidence: r.message,
    })),
  });
  f.safeguards.push({
    id: "ClusterGate",
    verdict: out.verdict,
    evidence: `${out.results.length} binding(s) of ${plan.metadata.cluster}: ${out.message}`,
  });
  if (out.verdict === "unreadable") f.held = true;
  if (out.verdict === "fail") {
    f.reasons.push({ reason: "GateFailed", message: `${out.reason}: ${out.message}` });
  }
}
