/**
 * `cairn rehearse PLAN`: runs a TalosUpgrade plan against the twin in virtual time with named
 * faults, prints the outcome per node and leaves the journal behind for `cairn journal show`.
 */
import { join, resolve } from "node:path";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import type { CommandIO } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import {
  FAULT_PRESET_NAMES,
  FAULT_PRESETS,
  type FaultPresetName,
  isFaultPresetName,
} from "../sim/fault_presets.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";

const DEFAULT_CLUSTER = "fixtures/clusters/home-ops.yaml";
const DEFAULT_POLICY = "fixtures/health/home-ops.yaml";

export const command: Command = {
  path: ["rehearse"],
  summary: "Run a plan on the twin in virtual time with named faults",
  usage: "PLAN [--cluster FILE] [--fault NAME]... [--fault-node NODE] [--journal URL] " +
    "[--health-policy P] [--output json]",
  help: `
Starts the twin (Kubernetes API simulator and Talos apid simulator, built from a cluster
description), binds PLAN into a journal, arms the named faults against one node and runs the
same executor as \`cairn apply\` in the twin's virtual time. Prints the outcome per node.

Options:
  --cluster FILE        cluster description (default ${DEFAULT_CLUSTER})
  --fault NAME          a named fault, repeatable: ${FAULT_PRESET_NAMES.join(", ")}
  --fault-node NODE     node the faults aim at (default: the plan's first node)
  --journal URL         journal (default: a file: URL in a fresh temporary directory, printed)
  --health-policy P     health policy file (default ${DEFAULT_POLICY})
  --output json         print the outcome as JSON

Exit codes: 0 every node completed; 1 the rollout halted (unresolved, failed, refused).`,
  options: {
    cluster: { type: "string" },
    fault: { type: "string", multiple: true },
    "fault-node": { type: "string" },
    journal: { type: "string" },
    "health-policy": { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const planPath = resolve(io.cwd, args.positionals[0]!);
    const faults = parseFaults(args.values["fault"]);
    const journalUrl = await journalUrlOf(args.values["journal"]);
    const { startRehearsal } = await import("../app/rehearsal.ts");
    const { JsonLogger } = await import("../adapters/log/json_logger.ts");
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    const log = new JsonLogger({
      write: (l) => io.stderr(l),
      clock: new SystemClock(),
      level: "warn",
    });
    const r = await startRehearsal({
      cluster: resolve(io.cwd, str(args.values["cluster"]) ?? DEFAULT_CLUSTER),
      planPath,
      planBytes: await readPlan(planPath),
      healthPolicyPath: resolve(io.cwd, str(args.values["health-policy"]) ?? DEFAULT_POLICY),
      faults,
      ...(str(args.values["fault-node"]) ? { faultNode: str(args.values["fault-node"])! } : {}),
      journalUrl,
      log,
    });
    try {
      const out = await r.run({ signal: io.signal });
      const report = {
        plan: planPath,
        journal: journalUrl,
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

async function readPlan(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}

function printOutcome(
  io: CommandIO,
  r: RolloutOutcome & { journal: string; faults: FaultPresetName[]; faultNode: string },
): void {
  for (const f of r.faults) {
    io.stdout(`fault ${f} on ${r.faultNode}: ${FAULT_PRESETS[f].summary}\n`);
  }
  for (const n of r.nodes) {
    io.stdout(`${n.node.padEnd(12)} ${n.state.padEnd(13)} ${n.reason}: ${n.detail}\n`);
  }
  io.stdout(`rollout ${r.state}\njournal ${r.journal}\n`);
}
