/**
 * `cairn plan preview FILE`: every plan-time safeguard checked on live evidence with zero writes
 * (seed 000 §2.2: no pre-pull, no inventory or namespace creation, no cordon), and a markdown
 * preview report. Only reads are issued: Talos Version, Kubernetes get/list/watch.
 */
import { resolve } from "node:path";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import type { TalosUpgradePlan } from "../domain/plan/schema.ts";
import type { ClusterConnection } from "./run_plan.ts";
import type {
  AssertionResult,
  HealthRound,
  PreviewReportModel,
  PreviewVerdict,
  ReasonLine,
  SafeguardResult,
} from "../report/model.ts";
import type { RoundOutcome } from "../domain/health/round.ts";

export const command: Command = {
  path: ["plan", "preview"],
  summary: "Check a plan on live evidence with zero writes and render the preview report",
  usage: "FILE --kubeconfig K --talosconfig T [--health-policy P] [--out report.md] " +
    "[--output json]",
  help: `
Checks FILE (schema and semantic checks), then reads the cluster: the Talos version of every
node against the plan's first hop, one health round of the policy (not recorded), and a drain
plan per node comparing the drain bound with the grace periods of the pods it would evict.
Issues reads only. Writes the markdown preview report to --out (or stdout).

Exit codes: 0 ready for approval; 1 refused or held.`,
  options: {
    kubeconfig: { type: "string" },
    talosconfig: { type: "string" },
    "health-policy": { type: "string" },
    out: { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const file = args.positionals[0]!;
    const kubeconfig = args.values["kubeconfig"], talosconfig = args.values["talosconfig"];
    if (typeof kubeconfig !== "string" || typeof talosconfig !== "string") {
      throw new UsageError("--kubeconfig K and --talosconfig T are required");
    }
    const policyPath = args.values["health-policy"];
    const { connectCluster } = await import("./run_plan.ts");
    const cluster = await connectCluster({
      kubeconfigPath: resolve(io.cwd, kubeconfig),
      talosconfigPath: resolve(io.cwd, talosconfig),
    });
    let model: PreviewReportModel;
    try {
      model = await preview(resolve(io.cwd, file), file, cluster, {
        ...(typeof policyPath === "string" ? { policyPath: resolve(io.cwd, policyPath) } : {}),
        cwd: io.cwd,
      });
    } finally {
      cluster.close();
    }
    const { renderPreviewReport } = await import("../report/render_preview.ts");
    const markdown = renderPreviewReport(model);
    const out = args.values["out"];
    if (typeof out === "string") await Deno.writeTextFile(resolve(io.cwd, out), markdown);
    if (wantsJson(args)) printJson(io, model);
    else if (typeof out === "string") io.stdout(`${model.verdict}: report written to ${out}\n`);
    else io.stdout(markdown);
    return model.verdict === "ready" ? EXIT.ok : EXIT.refused;
  },
};

interface Findings {
  reasons: ReasonLine[];
  assertions: AssertionResult[];
  safeguards: SafeguardResult[];
  healthRounds: HealthRound[];
  held: boolean;
}

/** Builds the preview model from the plan file and live reads. */
export async function preview(
  abs: string,
  file: string,
  cluster: ClusterConnection,
  o: { readonly policyPath?: string; readonly cwd: string },
): Promise<PreviewReportModel> {
  const { checkPlanFile } = await import("./plan_check.ts");
  const { parsePlan } = await import("../domain/plan/parse.ts");
  const { asTalosUpgrade } = await import("./run_plan.ts");
  const now = Date.now();
  const checked = await checkPlanFile(abs, { nowMs: now, cwd: o.cwd });
  const bytes = await Deno.readFile(abs).catch((e) => {
    throw new CairnError({ reason: "FileUnreadable", message: `cannot read ${file}: ${e}` });
  });
  const parsed = await parsePlan(bytes, { file });
  const plan = asTalosUpgrade(parsed);
  const f: Findings = {
    reasons: [],
    assertions: [],
    safeguards: [],
    healthRounds: [],
    held: false,
  };
  for (const p of checked.problems) {
    f.reasons.push({ reason: p.reason, message: p.message, where: file });
  }
  installerDigests(plan, f);
  await nodeVersions(plan, cluster, f);
  await drainPlanning(plan, cluster, f);
  if (o.policyPath) await healthRound(plan, cluster, o.policyPath, f);
  const verdict: PreviewVerdict = f.reasons.some((r) => !UNREADABLE.has(r.reason))
    ? "refused"
    : f.held || f.reasons.length > 0
    ? "held"
    : "ready";
  return {
    verdict,
    plan: {
      name: plan.metadata.name,
      kind: plan.kind,
      cluster: plan.metadata.cluster,
      digest: parsed.sha256,
      author: plan.metadata.author,
      commit: "working tree",
      branch: "",
      signers: [],
      approvals: { required: 1, valid: 0 },
      expiresAt: Date.parse(plan.metadata.expires),
    },
    generatedAt: now,
    reasons: f.reasons,
    safeguards: [
      ...f.safeguards,
      {
        id: "PreviewReadOnly",
        verdict: "pass",
        evidence: "only Talos Version and Kubernetes get/list/watch were issued",
      },
    ],
    sourceChecks: [],
    assertions: f.assertions,
    healthRounds: f.healthRounds,
    components: [],
    rollout: plan.spec.nodes.map((n) => ({
      node: n.name,
      role: n.role,
      from: plan.spec.hops[0]!.from,
      to: plan.spec.hops[plan.spec.hops.length - 1]!.to,
    })),
    writes: {
      count: 0,
      evidence: "the preview issues no mutating Talos RPC and no Kubernetes write by construction",
    },
  };
}

const UNREADABLE = new Set(["NodeUnreadable", "GateUnreadable"]);

function installerDigests(plan: TalosUpgradePlan, f: Findings): void {
  const missing = plan.spec.hops.filter((h) => !/@sha256:[0-9a-f]{64}$/.test(h.installer.image));
  for (const h of missing) {
    f.reasons.push({
      reason: "InstallerImageMismatch",
      message: `hop ${h.from} → ${h.to}: installer ${h.installer.image} is not pinned by digest`,
    });
  }
  f.safeguards.push({
    id: "InstallerDigestResolved",
    verdict: missing.length === 0 ? "pass" : "fail",
    evidence: plan.spec.hops.map((h) => h.installer.image).join(", "),
  });
}

async function nodeVersions(
  plan: TalosUpgradePlan,
  cluster: ClusterConnection,
  f: Findings,
): Promise<void> {
  const from = plan.spec.hops[0]!.from;
  let bad = 0, unreadable = 0;
  for (const n of plan.spec.nodes) {
    let tag: string | undefined;
    try {
      tag = (await cluster.talos.version(n.name, { timeoutMs: 10_000 })).tag;
    } catch (e) {
      unreadable++;
      f.reasons.push({ reason: "NodeUnreadable", message: String(e), where: n.name });
      continue;
    }
    const ok = tag === from;
    if (!ok) bad++;
    f.assertions.push({
      name: `${n.name} runs the first hop's source version`,
      verdict: ok ? "pass" : "fail",
      detail: `${n.name} runs ${tag}, plan expects ${from}`,
    });
    if (!ok) {
      f.reasons.push({
        reason: "NodeVersionUnexpected",
        message: `${n.name} runs ${tag}, plan expects ${from}`,
        where: n.name,
      });
    }
  }
  if (unreadable > 0) f.held = true;
  f.safeguards.push({
    id: "NodeIdentityBound",
    verdict: unreadable > 0 ? "unreadable" : bad > 0 ? "fail" : "pass",
    evidence: `${plan.spec.nodes.length} node(s) read through apid: ${bad} on another version`,
  });
}

async function drainPlanning(
  plan: TalosUpgradePlan,
  cluster: ClusterConnection,
  f: Findings,
): Promise<void> {
  const { planDrain } = await import("../engine/drain_plan.ts");
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
    f.assertions.push({
      name: `drain planning ${n.name}`,
      verdict: d.verdict === "refused" ? "fail" : "pass",
      detail: `drain plan ${d.verdict}: ${d.evict.length} pod(s) to evict, longest grace ` +
        `${d.longestGraceSeconds}s, bound ${bound}s` +
        (blockers.length ? `; ${blockers.join(", ")}` : ""),
    });
    if (d.verdict === "refused") {
      refused++;
      f.reasons.push({
        reason: "DrainBoundTooShort",
        message: `drain of ${n.name} refused: ${blockers.join(", ")}`,
        where: n.name,
      });
    }
  }
  f.safeguards.push({
    id: "DisruptionBudgetsAudited",
    verdict: refused > 0 ? "fail" : "pass",
    evidence: `drain planned for ${plan.spec.nodes.length} node(s) against a ${bound}s bound` +
      `${partial ? " with a reviewed partial-drain entry" : ""}: ${refused} refused`,
  });
}

async function healthRound(
  plan: TalosUpgradePlan,
  cluster: ClusterConnection,
  policyPath: string,
  f: Findings,
): Promise<void> {
  const { loadHealthPolicy } = await import("./run_plan.ts");
  const { ClusterEvidence } = await import("../adapters/health/cluster_evidence.ts");
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  const { collectRound } = await import("../engine/health_round.ts");
  const clock = new SystemClock();
  const evidence = new ClusterEvidence(cluster.kube, cluster.talos, clock);
  let out: RoundOutcome;
  try {
    out = await collectRound({ clock, evidence }, await loadHealthPolicy(policyPath), {
      intervalMs: 30_000,
    });
  } finally {
    evidence.stop();
  }
  f.healthRounds.push({
    id: "preview",
    purpose: "preflight",
    startedAt: out.window.startedAtMs,
    endedAt: clock.now(),
    verdict: out.verdict,
    results: out.results.map((r) => ({
      binding: r.binding,
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
