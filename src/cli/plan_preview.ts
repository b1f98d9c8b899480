/**
 * `cairn plan preview FILE`: every plan-time safeguard checked on live evidence with zero writes
 * (docs/safeguards.md#preview-writes-nothing: no pre-pull, no inventory or namespace creation, no
 * cordon), the bound evidence manifest checked offline against the evidence cache, and a markdown
 * preview report. Only reads are issued: Talos Version, Kubernetes get/list/watch.
 */
import { resolve } from "node:path";
import {
  type Command,
  EXIT,
  OUTPUT_OPTION,
  parseRegistryMirrors,
  printJson,
  UsageError,
  wantsJson,
} from "./command.ts";
import { CairnError, formatLocation, type Problem } from "../domain/errors.ts";
import type { BoundFileSource, InstallerResolver } from "../ports/dispatch.ts";
import type { ParsedPlan } from "../domain/plan/parse.ts";
import type { Clock } from "../ports/clock.ts";
import type { EvidenceReading, PlanFacts } from "../ports/reconcile.ts";
import type { PreviewReportModel } from "../report/model.ts";
import type { LiveCluster } from "../engine/preview/live_preview.ts";

export const command: Command = {
  path: ["plan", "preview"],
  summary: "Check a plan on live evidence with zero writes and render the preview report",
  usage: "FILE --kubeconfig K --talosconfig T [--health-policy P] [--evidence-cache DIR] " +
    "[--out report.md] [--output json]",
  help: `
Checks FILE (schema and semantic checks), then reads the cluster: its own name (Talos
Infos.cluster.talos.dev) against metadata.cluster, the Talos version of every node against the
plan's first hop, one health round of the plan's bound health policy (spec.healthPolicy, read
from the plan's repository and verified by its digest; not recorded), and a drain plan per node
comparing the drain bound with the grace periods of the pods it would evict. When the bound
policy cannot be used the report says so and the plan is not READY; health is never skipped.
Issues reads only. When the plan binds an evidence manifest (spec.evidence), checks it offline
against the evidence cache and lists every tuple, assertion and control; a missing cache entry
is unreadable and holds the plan (fill the cache with 'cairn evidence check MANIFEST --cache DIR
--fetch'). Writes the markdown preview report to --out (or stdout).

  --evidence-cache DIR  evidence cache (default: .cache/evidence under the current directory)
  --health-policy P     optional; refused unless P is byte for byte the policy the plan binds
  --registry-mirror H=URL  resolve installer references naming registry host H at URL
                        (repeatable; e.g. a twin's loopback registry). Each hop's installer is
                        resolved for the plan's platform and must match its pinned digest.

Exit codes: 0 ready for approval (every plan-time safeguard row evaluated and passing); 1 not
ready, refused or held (the report names the rows).`,
  options: {
    kubeconfig: { type: "string" },
    talosconfig: { type: "string" },
    "health-policy": { type: "string" },
    "evidence-cache": { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
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
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    const clock = new SystemClock();
    const abs = resolve(io.cwd, file);
    const input = await readPlanInputs(abs, file, io.cwd, clock.now());
    const cacheFlag = args.values["evidence-cache"];
    const { DEFAULT_EVIDENCE_CACHE } = await import("../app/evidence_run.ts");
    const cacheDir = resolve(
      io.cwd,
      typeof cacheFlag === "string" ? cacheFlag : DEFAULT_EVIDENCE_CACHE,
    );
    const evidence = await boundEvidenceReading(abs, input.parsed, cacheDir, io.cwd);
    const policyPath = args.values["health-policy"];
    const { connectCluster, requireBoundPolicy } = await import("../app/run_plan.ts");
    if (typeof policyPath === "string") {
      await requireBoundPolicy(resolve(io.cwd, policyPath), input.parsed.plan);
    }
    const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
    const files = workingTreeBoundFiles(abs);
    const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
    const installers = registryInstallerResolver({
      mirrors: parseRegistryMirrors(args.values["registry-mirror"]),
      timeoutMs: 30_000,
    });
    const cluster = await connectCluster({
      kubeconfigPath: resolve(io.cwd, kubeconfig),
      talosconfigPath: resolve(io.cwd, talosconfig),
    });
    let model: PreviewReportModel;
    try {
      model = await preview({
        ...input,
        file,
        cluster,
        clock,
        files,
        installers,
        ...(evidence ? { evidence } : {}),
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

/** The plan file parsed, and what `cairn plan check` found in it at `nowMs`. */
async function readPlanInputs(abs: string, file: string, cwd: string, nowMs: number) {
  const { checkPlanFile } = await import("../app/plan_check_run.ts");
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
  const { readBoundEvidence } = await import("../app/evidence_run.ts");
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
  const { livePreview } = await import("../engine/preview/live_preview.ts");
  const { previewVerdict } = await import("../engine/reconcile/reconciler.ts");
  const { previewModel } = await import("../report/reconcile_reports.ts");
  const plan = asTalosUpgrade(o.parsed);
  const live = await livePreview(
    plan,
    { cluster: o.cluster, clock: o.clock, ...(o.installers ? { installers: o.installers } : {}) },
    o.files,
  );
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
