/**
 * `cairn rehearse PLAN`: runs a TalosUpgrade plan against the twin in virtual time with named
 * faults, prints the outcome per node and leaves the journal behind for `cairn journal show`.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import type { CommandIO } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { MAX_BOUND_FILE_BYTES, readNamedFile } from "../adapters/repo/bound_file_reader.ts";
import {
  FAULT_PRESET_NAMES,
  FAULT_PRESETS,
  type FaultPresetName,
  isFaultPresetName,
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
    "[--allowed-signers F] [--approvals N] [--health-policy P] [--output json]",
  help: `
Starts the twin (Kubernetes API simulator and Talos apid simulator, built from a cluster
description), binds PLAN into a journal, arms the named faults against one node and runs the
same executor as \`cairn apply\` in the twin's virtual time. Prints the outcome per node.

Like \`cairn apply\`, it first re-runs every authorising check on current evidence (the checks of
'cairn plan check' over the bound files in the plan's repository, expiry, the cluster's own name
as the twin reports it, installer resolution) and again before each node's commitment; a
refusal is journaled and nothing is sent. The health rounds use the plan's bound policy.

Options:
  --cluster FILE        cluster description (default ${DEFAULT_CLUSTER})
  --fault NAME          a named fault, repeatable: ${FAULT_PRESET_NAMES.join(", ")}
  --fault-node NODE     node the faults aim at (default: the plan's first node)
  --journal URL         journal (default: a file: URL in a fresh temporary directory, printed)
  --allowed-signers F   check PLAN.sig against this trust root (re-read before every node);
                        without it the trust check is recorded as not evaluated
  --approvals N         approvers required besides the author (default 1)
  --health-policy P     optional; refused unless P is byte for byte the policy the plan binds
  --output json         print the outcome as JSON

Exit codes: 0 every node completed; 1 the rollout halted (unresolved, failed, refused).`,
  options: {
    cluster: { type: "string" },
    fault: { type: "string", multiple: true },
    "fault-node": { type: "string" },
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
    const { JsonLogger } = await import("../adapters/log/json_logger.ts");
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    const log = new JsonLogger({
      write: (l) => io.stderr(l),
      clock: new SystemClock(),
      level: "warn",
    });
    const planBytes = await readPlan(planPath);
    const policyPath = str(args.values["health-policy"]);
    if (policyPath) {
      const { parsePlan } = await import("../domain/plan/parse.ts");
      const { requireBoundPolicy } = await import("../app/run_plan.ts");
      const parsed = await parsePlan(planBytes, { file: planPath });
      await requireBoundPolicy(resolve(io.cwd, policyPath), parsed.plan);
    }
    const signers = str(args.values["allowed-signers"]);
    const approvals = Number(args.values["approvals"]);
    if (!Number.isSafeInteger(approvals) || approvals < 0) {
      throw new UsageError("--approvals must be a non-negative integer");
    }
    const r = await startRehearsal({
      cluster: await readableCluster(
        str(args.values["cluster"])
          ? resolve(io.cwd, str(args.values["cluster"])!)
          : DEFAULT_CLUSTER_PATH,
      ),
      planPath,
      planBytes,
      ...(signers
        ? {
          allowedSignersPath: resolve(io.cwd, signers),
          signatures: new TextDecoder().decode(
            await readNamedFile(`${planPath}.sig`, {
              what: "signatures",
              maxBytes: MAX_BOUND_FILE_BYTES,
              optional: true,
            }) ?? new Uint8Array(),
          ),
        }
        : {}),
      requiredApprovals: approvals,
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
  return await readNamedFile(path, { what: "plan", maxBytes: MAX_BOUND_FILE_BYTES });
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
