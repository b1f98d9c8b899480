/**
 * `cairn rehearse PLAN`: runs a TalosUpgrade plan against the twin in virtual time with named
 * faults, prints the outcome per node, writes the same execution report a real run publishes and
 * leaves the journal behind for `cairn journal show`.
 */
import { journalShown } from "./journal_common.ts";
import { type PhaseOutput, phaseOutput } from "./phase_output.ts";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import type { CommandIO } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import {
  FAULT_PRESET_NAMES,
  FAULT_PRESETS,
  type FaultPresetName,
  isFaultPresetName,
  presetPlanKind,
} from "../sim/fault_presets.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";

const DEFAULT_CLUSTER = "fixtures/clusters/home-ops.yaml";
/** The default description ships with cairn: resolved from its install, not the caller's cwd. */
export const DEFAULT_CLUSTER_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  "../..",
  DEFAULT_CLUSTER,
);

export const command: Command = {
  path: ["rehearse"],
  summary: "Run a plan on the twin in virtual time with named faults",
  usage: "PLAN [--cluster FILE] [--fault NAME]... [--fault-node NODE] [--journal URL] " +
    "[--allowed-signers F] [--approvals N] [--health-policy P] [--out DIR] [--output json]",
  help: `
Starts the twin (Kubernetes API simulator and Talos apid simulator, built from a cluster
description), binds PLAN into a journal, arms the named faults against one node and runs the
same executor as \`cairn apply\` in the twin's virtual time. Prints the outcome per node and
writes execution.md, the report a real run publishes, rendered from the rehearsal's journal.

Like \`cairn apply\`, it first re-runs every authorising check on current evidence (the checks of
'cairn plan check' over the bound files in the plan's repository, expiry, the cluster's own name
as the twin reports it, installer resolution) and again before each node's commitment; a
refusal is journaled and nothing is sent. The health rounds use the plan's bound policy.

Options:
  --cluster FILE        cluster description (default ${DEFAULT_CLUSTER})
  --fault NAME          a named fault, repeatable:
${wrapWords(FAULT_PRESET_NAMES, 24, 96)}
  --fault-node NODE     node the --fault presets aim at, one of the plan's nodes
                        (default: its first)
  --journal URL         journal (default: a file: URL in a fresh temporary directory, printed)
  --allowed-signers F   check PLAN.sig against this trust root (re-read before every node);
                        without it the trust check is recorded as not evaluated
  --approvals N         approvers required besides the author (default 1)
  --health-policy P     optional; refused unless P is byte for byte the policy the plan binds
  --out DIR             where execution.md is written (default reports/rehearsal/<plan>/)
  --output json         print the outcome as JSON

On a terminal the rollout shows one status line (node, phase, the twin's elapsed time, what it
waits for) with log lines above it; elsewhere one JSON line per phase on stderr.

Exit codes: 0 every node completed; 1 the rollout halted (unresolved, failed, refused);
2 usage error (an unknown fault or fault node).`,
  options: {
    cluster: { type: "string" },
    fault: { type: "string", multiple: true },
    "fault-node": { type: "string" },
    out: { type: "string" },
    journal: { type: "string" },
    "health-policy": { type: "string" },
    "allowed-signers": { type: "string" },
    approvals: { type: "string", default: "1" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const planPath = resolve(io.cwd, args.positionals[0]!);
    const faults = parseFaults(args.values["fault"]);
    const journalUrl = await journalUrlOf(args.values["journal"]);
    const { startRehearsal } = await import("../app/rehearsal.ts");
    const { readPlanSignatures, readRehearsalPlan, rehearsalLog } = await import(
      "../app/rehearse_run.ts"
    );
    // Once the display runs, log lines go through it: on a terminal above the status line, never
    // glued to its end.
    const display: { out?: PhaseOutput } = {};
    const log = await rehearsalLog((l) => display.out ? display.out.log(l) : io.stderr(l));
    const planBytes = await readRehearsalPlan(planPath);
    const { parsePlan } = await import("../domain/plan/parse.ts");
    const parsed = await parsePlan(planBytes, { file: planPath });
    const faultNode = str(args.values["fault-node"]);
    if (faultNode !== undefined && faults.length === 0) {
      // Aiming no fault would rehearse a clean run while the command line reads as a fault drill.
      throw new UsageError("--fault-node aims the faults of --fault NAME; no --fault was given");
    }
    // Checked before the twin starts: faults aimed at a node the plan never touches would
    // never fire, and the rehearsal would "complete" having rehearsed nothing.
    for (const f of faults) {
      // A preset for another kind's steps would never fire here.
      if (presetPlanKind(f) !== parsed.plan.kind) {
        throw new UsageError(
          `--fault ${f} rehearses a ${presetPlanKind(f)}; ${parsed.plan.metadata.name} is a ` +
            parsed.plan.kind,
        );
      }
    }
    const planNodes = nodeNames(parsed.plan);
    if (faultNode !== undefined && !planNodes.includes(faultNode)) {
      throw new UsageError(
        `--fault-node ${faultNode}: no such node in plan ${parsed.plan.metadata.name}; ` +
          `its nodes: ${planNodes.join(", ")}`,
      );
    }
    const policyPath = str(args.values["health-policy"]);
    if (policyPath) {
      const { requireBoundPolicy } = await import("../app/run_plan.ts");
      await requireBoundPolicy(resolve(io.cwd, policyPath), parsed.plan);
    }
    const outDir = resolve(
      io.cwd,
      str(args.values["out"]) ?? join("reports", "rehearsal", parsed.plan.metadata.name),
    );
    const signers = str(args.values["allowed-signers"]);
    const approvals = Number(args.values["approvals"]);
    if (!Number.isSafeInteger(approvals) || approvals < 0) {
      throw new UsageError("--approvals must be a non-negative integer");
    }
    const clusterPath = await readableCluster(
      str(args.values["cluster"])
        ? resolve(io.cwd, str(args.values["cluster"])!)
        : DEFAULT_CLUSTER_PATH,
    );
    await requireSameCluster(clusterPath, parsed.plan.metadata.cluster);
    // The one per-kind choice: a ConfigApply runs through its own executor and rehearsal.
    const start = parsed.plan.kind === "ConfigApply"
      ? (await import("../app/config_rehearsal.ts")).startConfigRehearsal
      : startRehearsal;
    const r = await start({
      cluster: clusterPath,
      planPath,
      planBytes,
      ...(signers
        ? {
          allowedSignersPath: resolve(io.cwd, signers),
          signatures: await readPlanSignatures(planPath),
        }
        : {}),
      requiredApprovals: approvals,
      faults,
      ...(faultNode !== undefined ? { faultNode } : {}),
      journalUrl,
      log,
    });
    try {
      // On a terminal a status line in the twin's (virtual) time; elsewhere a JSON line per phase.
      const progress = display.out = await phaseOutput(io, r.clock);
      const out = await r.run({
        signal: io.signal,
        onPhase: (e) => progress.onPhase(e),
      });
      progress.done(`rollout ${out.state}`);
      const reportPath = join(outDir, "execution.md");
      await Deno.mkdir(outDir, { recursive: true });
      await Deno.writeTextFile(reportPath, await r.report(out));
      const report = {
        plan: planPath,
        journal: journalShown(journalUrl),
        report: reportPath,
        faults,
        faultNode: r.faultNode,
        ...out,
      };
      if (wantsJson(args)) printJson(io, report);
      else printOutcome(io, report);
      return out.state === "completed" ? EXIT.ok : EXIT.refused;
    } finally {
      await r.stop();
    }
  },
};

/** `words`, comma-separated, in lines indented by `indent` and no wider than `width`. */
function wrapWords(words: readonly string[], indent: number, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const [i, w] of words.entries()) {
    const word = i < words.length - 1 ? `${w},` : w;
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => " ".repeat(indent) + l).join("\n");
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function parseFaults(v: unknown): FaultPresetName[] {
  const names = Array.isArray(v) ? v.map(String) : [];
  for (const n of names) {
    if (!isFaultPresetName(n)) {
      throw new UsageError(`unknown fault ${n}; known: ${FAULT_PRESET_NAMES.join(", ")}`);
    }
  }
  return names as FaultPresetName[];
}

async function journalUrlOf(v: unknown): Promise<string> {
  if (typeof v === "string") return v;
  const dir = await Deno.makeTempDir({ prefix: "cairn-rehearse-" });
  return `file:${join(dir, "journal.db")}`;
}

/** The cluster description must be a readable file before the twin starts (else a clear error). */
async function readableCluster(path: string): Promise<string> {
  try {
    await Deno.stat(path).then((st) => {
      if (!st.isFile) throw new Error("not a regular file");
    });
    return path;
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read the cluster description ${path}: ${
        e instanceof Error ? e.message : String(e)
      } (--cluster FILE)`,
    });
  }
}

function printOutcome(
  io: CommandIO,
  r: RolloutOutcome & {
    journal: string;
    report: string;
    faults: FaultPresetName[];
    faultNode: string;
  },
): void {
  for (const f of r.faults) {
    io.stdout(`fault ${f} on ${r.faultNode}: ${FAULT_PRESETS[f].summary}\n`);
  }
  for (const n of r.nodes) {
    io.stdout(`${n.node.padEnd(12)} ${n.state.padEnd(13)} ${n.reason}: ${n.detail}\n`);
  }
  io.stdout(`rollout ${r.state}\njournal ${r.journal}\nreport  ${r.report}\n`);
}

/** The nodes a plan rolls, in plan order (none for a kind without a node list). */
function nodeNames(plan: unknown): string[] {
  const nodes = (plan as { spec?: { nodes?: readonly { name?: unknown }[] } }).spec?.nodes;
  return Array.isArray(nodes) ? nodes.map((n) => String(n.name)) : [];
}

/**
 * A plan rehearsed on a twin of another cluster rehearses nothing it would do for real: refused
 * before the twin starts, naming both clusters (the dispatch check would only see that the plan's
 * nodes do not answer).
 */
async function requireSameCluster(path: string, planCluster: string): Promise<void> {
  const { parse } = await import("yaml");
  let name: unknown;
  try {
    name = (parse(await Deno.readTextFile(path)) as { metadata?: { name?: unknown } } | null)
      ?.metadata?.name;
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read the cluster description ${path}: ${
        e instanceof Error ? e.message : String(e)
      } (--cluster FILE)`,
    });
  }
  if (name !== planCluster) {
    throw new CairnError({
      reason: "ClusterIdentityMismatch",
      message: `the plan is for cluster ${planCluster}, but ${path} describes ${
        typeof name === "string" ? name : "a cluster without metadata.name"
      }; nothing was started (--cluster FILE)`,
    });
  }
}
