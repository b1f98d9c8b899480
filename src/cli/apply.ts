/**
 * `cairn apply FILE`: runs one signed TalosUpgrade or KubernetesUpgrade plan now with the system
 * clock. Signatures and the approval policy are verified first; then every authorising check runs
 * on current evidence
 * (the dispatch check: plan checks, bound-file digests, expiry, the trust root as it is now, the
 * cluster's own name, installer resolution), again before each node's commitment. A refusal is
 * journaled and sends nothing. The reconciler calls the same executor (engine/executor/run_plan.ts).
 */
import { phaseOutput } from "./phase_output.ts";
import {
  CLUSTER_HELP,
  CLUSTER_OPTIONS,
  clusterFlags,
  requireKubeconfig,
  requireTalosconfig,
} from "./cluster_flags.ts";
import { resolve } from "node:path";
import { JOURNAL_HELP, JOURNAL_OPTION, journalLocation } from "./journal_common.ts";
import {
  type Command,
  EXIT,
  OUTPUT_OPTION,
  parseRegistryMirrors,
  printJson,
  UsageError,
  wantsJson,
} from "./command.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";

export const command: Command = {
  path: ["apply"],
  summary: "Verify a signed plan's approval and run it now",
  usage: "FILE --kubeconfig K --talosconfig T --journal URL --allowed-signers F " +
    "[--approvals N] [--health-policy P] [--output json]",
  help: `
Verifies FILE.sig against allowed_signers and the approval policy (the author plus N approvers),
then re-runs every check that authorises it on current evidence: the checks of 'cairn plan
check' over the bound files as they are now in the repository (catalogue, health policy and
evidence manifest digests, catalogue freshness, expiry, versions), the signatures under
allowed_signers as read now, the cluster's own name (Talos Infos.cluster.talos.dev) against
metadata.cluster, and each hop's installer resolved for the plan's platform against its pinned
digest. The same check runs again before each node's commitment. A refusal is recorded in the
journal and nothing is sent.

Then runs the plan node by node: intent, attempt and response for every mutation in the journal,
fresh health rounds of the plan's bound health policy before progressing, and an honest
classification of each node step.

${CLUSTER_HELP}
${JOURNAL_HELP}
  --allowed-signers F     the trust root (git's allowed_signers format), kept outside the repository
  --approvals N           approvers needed besides the author (default 1)
  --health-policy P       optional; refused unless P is byte for byte the policy the plan binds
  --registry-mirror H=URL resolve installer references naming registry host H at URL (repeatable)
  --merged-commit SHA     a ComponentUpgrade's merge into the watched branch (default: the commit
                          that introduced FILE on the first-parent history of its repository's HEAD);
                          Flux must report it, or a later commit containing it, as applied

On a terminal the rollout shows one status line (node, phase, elapsed time, what it waits for)
with log lines above it; elsewhere one JSON line per phase beside the JSON log lines on stderr.

Exit codes: 0 every node completed; 1 refused, or the rollout halted.`,
  options: {
    ...CLUSTER_OPTIONS,
    ...JOURNAL_OPTION,
    "allowed-signers": { type: "string" },
    approvals: { type: "string", default: "1" },
    "health-policy": { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
    "merged-commit": { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const report = (out: RolloutOutcome) => {
      if (wantsJson(args)) printJson(io, out);
      else {
        for (const n of out.nodes) io.stdout(`${n.node} ${n.state} ${n.reason}: ${n.detail}\n`);
        io.stdout(`rollout ${out.state}\n`);
      }
      return out.state === "completed" ? EXIT.ok : EXIT.refused;
    };
    const file = resolve(io.cwd, args.positionals[0]!);
    const where = clusterFlags(args, io);
    // Every missing input is named at once, not one per run.
    const missing: string[] = [];
    const need = <T>(get: () => T): T | undefined => {
      try {
        return get();
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        missing.push(e.message);
        return undefined;
      }
    };
    const kubeconfig = need(() => requireKubeconfig(where));
    const talosconfig = need(() => requireTalosconfig(where));
    const journalUrl = need(() => journalLocation(args, io));
    const signersFile = need(() => {
      const v = args.values["allowed-signers"];
      if (typeof v !== "string" || v === "") {
        throw new UsageError("--allowed-signers F is required");
      }
      return v;
    });
    if (missing.length > 0 || !kubeconfig || !talosconfig || !journalUrl || !signersFile) {
      throw new UsageError(missing.join("; "));
    }
    const approvals = Number(args.values["approvals"]);
    if (!Number.isSafeInteger(approvals) || approvals < 0) {
      throw new UsageError("--approvals must be a non-negative integer");
    }
    const policyPath = args.values["health-policy"];
    const merged = args.values["merged-commit"];
    if (merged !== undefined && (typeof merged !== "string" || !/^[0-9a-f]{40}$/.test(merged))) {
      throw new UsageError("--merged-commit must be a full commit id (40 lower-case hex)");
    }
    const { applyDisplayClock, applyPlan } = await import("../app/apply_run.ts");
    // On a terminal: one status line (node, phase, elapsed) with log lines kept above it.
    // Elsewhere: the JSON log lines and one JSON line per phase, for CI and log collectors.
    // The real clock: the line is redrawn every second so elapsed moves while a step waits.
    const progress = await phaseOutput(io, await applyDisplayClock(), { tickMs: 1000 });
    const r = await applyPlan({
      file,
      kubeconfig,
      talosconfig,
      ...(where.kubeContext ? { kubeContext: where.kubeContext } : {}),
      ...(where.talosContext ? { talosContext: where.talosContext } : {}),
      journalUrl,
      signersFile,
      approvals,
      ...(typeof policyPath === "string" ? { policyPath: resolve(io.cwd, policyPath) } : {}),
      mirrors: parseRegistryMirrors(args.values["registry-mirror"]),
      ...(typeof merged === "string" ? { mergedCommit: merged } : {}),
      writeLog: (l) => progress.log(l),
      signal: io.signal,
      onPhase: (e) => progress.onPhase(e),
    }).catch((e) => {
      progress.close(); // the error is printed below the last status line, not glued to it
      throw e;
    });
    if (r.kind === "ran") progress.done(`rollout ${r.outcome.state}`);
    if (r.kind === "ran") return report(r.outcome);
    if (r.kind === "component") {
      progress.done(`component ${r.end}`);
      if (wantsJson(args)) printJson(io, { end: r.end, report: r.report });
      else io.stdout(r.report + "\n");
      return r.ok ? EXIT.ok : EXIT.refused;
    }
    progress.close(); // refused before running: the ticking stops, nothing was drawn
    if (wantsJson(args)) printJson(io, { refused: true, policy: r.verdict });
    else io.stderr(`refused: ${r.verdict.reasons.join(", ")}: ${r.verdict.summary}\n`);
    return EXIT.refused;
  },
};
