/**
 * What `cairn plan preview` wires: the plan file checked as `cairn plan check` checks it, the
 * bound evidence manifest checked offline against the evidence cache, the working tree's bound
 * files, the registry resolver and the cluster connection (reads only), then the engine's live
 * zero-write preview (docs/safeguards.md#preview-writes-nothing) and the preview report model the
 * reconcile loop renders too. The command only turns flags into this request and renders.
 */
import type { KubeconfigFiles } from "../adapters/kube/kubeconfig_files.ts";
import { resolve } from "node:path";
import { CairnError, formatLocation, type Problem } from "../domain/errors.ts";
import type { ParsedPlan } from "../domain/plan/parse.ts";
import type { LiveCluster } from "../engine/preview/live_preview.ts";
import type { Clock } from "../ports/clock.ts";
import type { BoundFileSource, InstallerResolver } from "../ports/dispatch.ts";
import type { EvidenceReading, PlanFacts } from "../ports/reconcile.ts";
import type { PreviewReportModel } from "../report/model.ts";

/** One `cairn plan preview`, with every path but the plan's own already resolved. */
export interface PreviewRequest {
  /** The plan file as named to the user (resolved against `cwd`). */
  readonly file: string;
  readonly cwd: string;
  readonly kubeconfig: KubeconfigFiles;
  readonly talosconfig: string;
  readonly kubeContext?: string;
  readonly talosContext?: string;
  /** Default: the shared evidence cache under the working directory. */
  readonly evidenceCache?: string;
  /** Refused unless byte for byte the policy the plan binds. */
  readonly policyPath?: string;
  readonly mirrors: Readonly<Record<string, string>>;
}

/** Checks the plan on live evidence with zero writes and builds its preview report model. */
export async function previewPlanFile(o: PreviewRequest): Promise<PreviewReportModel> {
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  const clock = new SystemClock();
  const abs = resolve(o.cwd, o.file);
  const input = await readPlanInputs(abs, o.file, o.cwd, clock.now());
  const { DEFAULT_EVIDENCE_CACHE } = await import("./evidence_run.ts");
  const cacheDir = o.evidenceCache ?? resolve(o.cwd, DEFAULT_EVIDENCE_CACHE);
  const evidence = await boundEvidenceReading(abs, input.parsed, cacheDir, o.cwd);
  const { connectCluster, requireBoundPolicy } = await import("./run_plan.ts");
  if (o.policyPath !== undefined) await requireBoundPolicy(o.policyPath, input.parsed.plan);
  const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
  const files = workingTreeBoundFiles(abs);
  const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
  const installers = registryInstallerResolver({
    mirrors: o.mirrors,
    timeoutMs: 30_000,
  });
  const cluster = await connectCluster({
    kubeconfigPath: o.kubeconfig,
    talosconfigPath: o.talosconfig,
    ...(o.kubeContext ? { kubeContext: o.kubeContext } : {}),
    ...(o.talosContext ? { talosContext: o.talosContext } : {}),
  });
  let model: PreviewReportModel;
  try {
    model = await preview({
      ...input,
      file: o.file,
      cluster,
      clock,
      files,
      installers,
      ...(evidence ? { evidence } : {}),
    });
  } finally {
    cluster.close();
  }
  return model;
}

/** The plan file parsed, and what `cairn plan check` found in it at `nowMs`. */
async function readPlanInputs(abs: string, file: string, cwd: string, nowMs: number) {
  const { checkPlanFile } = await import("./plan_check_run.ts");
  const { parsePlan } = await import("../domain/plan/parse.ts");
  const { readPlainFile } = await import("../adapters/repo/bound_file_reader.ts");
  const { MAX_YAML_BYTES } = await import("../domain/plan/yaml_load.ts");
  const checked = await checkPlanFile(abs, { nowMs, cwd });
  // Read as plan check reads it: never through a link, a FIFO or past the size limit.
  const read = await readPlainFile(abs, MAX_YAML_BYTES);
  if (read.status !== "read") {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${file}: ${read.detail}`,
    });
  }
  const bytes = read.bytes;
  return { parsed: await parsePlan(bytes, { file }), problems: checked.problems };
}

/** The bound manifest (resolved upwards from the plan's directory) checked offline. */
async function boundEvidenceReading(
  planPath: string,
  parsed: ParsedPlan,
  cacheDir: string,
  cwd: string,
): Promise<EvidenceReading | undefined> {
  const { boundManifest } = await import("../engine/reconcile/bound_evidence.ts");
  const bound = boundManifest(parsed.plan);
  if (!bound) return undefined;
  const { readBoundEvidence } = await import("./evidence_run.ts");
  const { readBoundFile } = await import("../adapters/repo/bound_file_reader.ts");
  // Confined to the repository, no symlinks, size-capped; a refused path is unread here and
  // its reason is among plan check's problems.
  const read = await readBoundFile(planPath, bound.path, { cwd });
  return read.status === "read"
    ? await readBoundEvidence({ ...bound, bytes: read.bytes }, cacheDir)
    : await readBoundEvidence(bound, cacheDir);
}

/** Everything the preview model is built from; the caller did all the file I/O. */
export interface PreviewInput {
  readonly parsed: ParsedPlan;
  /** The plan file as named to the user. */
  readonly file: string;
  /** What `cairn plan check` found. */
  readonly problems: readonly Problem[];
  readonly cluster: LiveCluster;
  /** Stamps the report and times the health round. */
  readonly clock: Clock;
  /** The plan's bound files (the health round uses the bound policy from here). */
  readonly files: BoundFileSource;
  /** Resolves each hop's installer for the plan's platform (absent: recorded as not resolved). */
  readonly installers?: InstallerResolver;
  readonly evidence?: EvidenceReading;
}

/**
 * Builds the preview model of a working-tree plan: plan checks, the evidence reading and the
 * live zero-write checks, rendered as the reconcile loop renders previews.
 */
export async function preview(o: PreviewInput): Promise<PreviewReportModel> {
  const { asTalosUpgrade } = await import("../engine/executor/run_plan.ts");
  const { livePreviewer } = await import("../engine/preview/live_preview.ts");
  const { previewVerdict } = await import("../engine/reconcile/reconciler.ts");
  const { previewModel } = await import("../report/reconcile_reports.ts");
  // TalosUpgrade, KubernetesUpgrade and ConfigApply plans have live checks; other kinds are
  // refused here.
  const plan = o.parsed.plan.kind === "KubernetesUpgrade" || o.parsed.plan.kind === "ConfigApply"
    ? o.parsed.plan
    : asTalosUpgrade(o.parsed);
  const live = await livePreviewer({
    cluster: o.cluster,
    clock: o.clock,
    ...(o.installers ? { installers: o.installers } : {}),
  }).preview(o.parsed, o.files);
  const facts: PlanFacts = {
    name: plan.metadata.name,
    path: o.file,
    branch: "",
    commit: "working tree",
    digest: o.parsed.sha256,
    plan,
    problems: o.problems,
    requiredApprovals: 1,
    refusals: o.problems.map((p) => ({
      reason: p.reason,
      message: p.message,
      where: p.location ? formatLocation(p.location) : o.file,
    })),
    ...(o.evidence ? { evidence: o.evidence } : {}),
  };
  return previewModel({
    facts,
    verdict: previewVerdict(facts, live),
    generatedAt: o.clock.now(),
    live,
  });
}
