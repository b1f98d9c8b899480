/**
 * `cairn plan preview FILE`: every plan-time safeguard checked on live evidence with zero writes
 * (docs/safeguards.md#preview-writes-nothing: no pre-pull, no inventory or namespace creation, no
 * cordon), the bound evidence manifest checked offline against the evidence cache, and a markdown
 * preview report. Only reads are issued: Talos Version, Kubernetes get/list/watch.
 */
import {
  CLUSTER_HELP,
  CLUSTER_OPTIONS,
  clusterFlags,
  requireKubeconfig,
  requireTalosconfig,
} from "./cluster_flags.ts";
import { resolve } from "node:path";
import {
  type Command,
  EXIT,
  OUTPUT_OPTION,
  parseRegistryMirrors,
  printJson,
  wantsJson,
} from "./command.ts";

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

${CLUSTER_HELP}
  --evidence-cache DIR  evidence cache (default: .cache/evidence under the current directory)
  --health-policy P     optional; refused unless P is byte for byte the policy the plan binds
  --registry-mirror H=URL  resolve installer references naming registry host H at URL
                        (repeatable; e.g. a twin's loopback registry). Each hop's installer is
                        resolved for the plan's platform and must match its pinned digest.

Exit codes: 0 ready for approval (every plan-time safeguard row evaluated and passing); 1 not
ready, refused or held (the report names the rows).`,
  options: {
    ...CLUSTER_OPTIONS,
    "health-policy": { type: "string" },
    "evidence-cache": { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
    out: { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const file = args.positionals[0]!;
    const where = clusterFlags(args, io);
    const kubeconfig = requireKubeconfig(where), talosconfig = requireTalosconfig(where);
    const cacheFlag = args.values["evidence-cache"];
    const policyPath = args.values["health-policy"];
    const { previewPlanFile } = await import("../app/preview_run.ts");
    const model = await previewPlanFile({
      file,
      cwd: io.cwd,
      kubeconfig,
      talosconfig,
      ...(where.kubeContext ? { kubeContext: where.kubeContext } : {}),
      ...(where.talosContext ? { talosContext: where.talosContext } : {}),
      ...(typeof cacheFlag === "string" ? { evidenceCache: resolve(io.cwd, cacheFlag) } : {}),
      ...(typeof policyPath === "string" ? { policyPath: resolve(io.cwd, policyPath) } : {}),
      mirrors: parseRegistryMirrors(args.values["registry-mirror"]),
    });
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
