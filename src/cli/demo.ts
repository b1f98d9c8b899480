/**
 * `cairn demo`: the whole GitOps loop on one machine. A local bare repository receives the
 * example plan on a branch, signed by two throwaway in-memory Ed25519 keys (author alice, approver bob; the
 * allowed_signers trust root lives outside the repository); the reconciler previews it, the
 * branch is merged, and the reconciler executes the plan on the twin (the 7-node home-ops
 * cluster, virtual time) and commits the execution report. `--fault NAME` arms one of the named
 * faults of `cairn rehearse` on the first node.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Command, EXIT, OUTPUT_OPTION, UsageError } from "./command.ts";
import type { DemoResult } from "../app/demo_run.ts";
import { type PhaseOutput, phaseOutput } from "./phase_output.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const PLAN = "talos-v1.14.2";
const PLAN_BRANCH = `plan/${PLAN}`;

export const command: Command = {
  path: ["demo"],
  summary: "Run the GitOps loop locally: signed plan, preview, merge, execution on the twin",
  usage:
    "[--fault NAME | --component rook-ceph [--stale-operator]] [--dir DIR] [--journal URL] [--output json]",
  help: `Creates a bare Git repository with the example plan signed by throwaway keys, starts the
twin (7-node home-ops cluster), and runs the reconciler until the plan's execution ends. Prints
where the execution report is and a short summary.

  --fault NAME   arm a named fault of 'cairn rehearse' on the first node (e.g. reboot-response-lost)
  --component C  instead: the review → merge → observe loop of a component bump (rook-ceph): a
                 generated home-ops GitOps repository, a Renovate-like branch reviewed against
                 the playbooks, a signed ComponentUpgrade plan, the merge delivered by the
                 twin's Flux (in process), cairn observing the delivery and the after-merge
                 checks; the report is committed to the repository
  --stale-operator  with --component: the twin's Rook operator does not re-render the CSI
                 plugins after its restart (the run ends NOT LANDED, naming the running image)
  --dir DIR      work in DIR (default: a new temporary directory); it is kept afterwards
  --journal URL  the journal (default: a libSQL file in DIR/state); postgres://… runs the demo
                 on a PostgreSQL journal (give it an empty database)
  --output json  print the summary as JSON

On a terminal the execution shows one status line (node, phase, the twin's elapsed time, what
it waits for); elsewhere one JSON line per phase on stderr. Ctrl-C stops the run where it is
and keeps the directory (exit 1).

Exit codes: 0 the run reached the expected outcome (completed; the fault's expected outcome with
--fault; not-landed with --stale-operator); 1 it did not, or it was interrupted; 2 usage error;
3 internal error.`,
  options: {
    fault: { type: "string" },
    component: { type: "string" },
    "stale-operator": { type: "boolean" },
    dir: { type: "string" },
    journal: { type: "string" },
    ...OUTPUT_OPTION,
  },
  async run(args, io) {
    const component = args.values["component"] as string | undefined;
    if (component !== undefined) return await componentDemo(args, io, component);
    if (args.values["stale-operator"]) throw new UsageError("--stale-operator needs --component");
    const { isFaultPresetName, FAULT_PRESET_NAMES, FAULT_PRESETS, presetPlanKind } = await import(
      "../sim/fault_presets.ts"
    );
    const fault = args.values["fault"] as string | undefined;
    if (fault !== undefined && !isFaultPresetName(fault)) {
      // Only the presets of the demo's kind: the others would be refused next.
      const talos = FAULT_PRESET_NAMES.filter((n) => presetPlanKind(n) === "TalosUpgrade");
      throw new UsageError(`unknown fault '${fault}'; one of: ${talos.join(", ")}`);
    }
    if (fault !== undefined && presetPlanKind(fault) !== "TalosUpgrade") {
      // The demo rolls out a TalosUpgrade: a preset for another kind would never fire.
      throw new UsageError(
        `fault '${fault}' rehearses a ${presetPlanKind(fault)}: use cairn rehearse`,
      );
    }
    const json = args.values["output"] === "json";
    const dir = await demoDir(args.values["dir"] as string | undefined, "cairn-demo-");
    // The execution's phases are shown live: on a terminal a status line (node, phase, the
    // twin's elapsed time, what it waits for) with the demo's lines kept above it; elsewhere one
    // JSON line per phase on stderr.
    const display: { out?: PhaseOutput } = {};
    const say = (line: string) => {
      if (json) return;
      if (display.out && io.tty) display.out.log(line);
      else io.stdout(`${line}\n`);
    };
    const { runDemo } = await import("../app/demo_run.ts");
    const r = await runDemo({
      dir,
      root: ROOT,
      plan: PLAN,
      planBranch: PLAN_BRANCH,
      say,
      signal: io.signal,
      progress: async (clock) => (display.out = await phaseOutput(io, clock)),
      ...(fault ? { fault } : {}),
      ...(typeof args.values["journal"] === "string" ? { journalUrl: args.values["journal"] } : {}),
    });
    if (json) io.stdout(JSON.stringify(r, null, 2) + "\n");
    else printSummary(r, io.stdout);
    if (io.signal.aborted) {
      io.stderr(
        `cairn demo: interrupted; the run stopped where it was (outcome ${r.outcome}), ` +
          `its repository, journal and report are kept in ${dir}\n`,
      );
      return EXIT.refused;
    }
    const expected = fault
      ? FAULT_PRESETS[fault as keyof typeof FAULT_PRESETS].expect
      : "completed";
    return r.outcome === expected ? EXIT.ok : EXIT.refused;
  },
};

/**
 * Where the demo works. It builds its repository, keys and journal from nothing: a directory
 * holding a previous run would be half overwritten (new keys) and then fail on the old repository.
 */
async function demoDir(given: string | undefined, prefix: string): Promise<string> {
  if (given === undefined) return await Deno.makeTempDir({ prefix });
  try {
    for await (const _ of Deno.readDir(given)) {
      throw new UsageError(
        `--dir ${given} is not empty (a previous demo?); give a new or empty one`,
      );
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return given; // the demo creates it
    if (e instanceof Deno.errors.NotADirectory) {
      throw new UsageError(`--dir ${given} is not a directory`);
    }
    throw e;
  }
  return given;
}

function printSummary(r: DemoResult, out: (t: string) => void): void {
  const mins = Math.floor(r.virtualMs / 60_000);
  const secs = Math.round((r.virtualMs % 60_000) / 1000);
  out(
    [
      "",
      ...(r.reportCopy !== undefined
        ? [
          `Execution report: ${r.reportPath} (branch main of ${r.remote})`,
          `  local copy:     ${r.reportCopy}`,
        ]
        : [`Execution report: none committed (the run stopped before it)`]),
      `Outcome:          ${r.outcome}${r.fault ? ` (fault: ${r.fault})` : ""}`,
      `Report verdict:   ${r.reportVerdict}`,
      `Nodes completed:  ${r.nodesCompleted} of ${r.nodes}`,
      `Attempts:         ${r.attempts} (${r.unaccounted} unaccounted)`,
      `Virtual duration: ${mins}m ${secs}s`,
      `Journal head:     ${r.journalHead}`,
      "",
    ].join("\n"),
  );
}

async function componentDemo(
  args: Parameters<Command["run"]>[0],
  io: Parameters<Command["run"]>[1],
  component: string,
): Promise<number> {
  if (component !== "rook-ceph") {
    throw new UsageError(`unknown component '${component}'; the component demo knows: rook-ceph`);
  }
  if (args.values["fault"] !== undefined) {
    throw new UsageError("--fault and --component exclude each other");
  }
  const json = args.values["output"] === "json";
  const dir = await demoDir(args.values["dir"] as string | undefined, "cairn-demo-component-");
  const stale = args.values["stale-operator"] === true;
  const { runComponentDemo } = await import("../app/demo_component.ts");
  const r = await runComponentDemo({
    dir,
    root: ROOT,
    component,
    staleOperator: stale,
    say: (line) => {
      if (!json) io.stdout(`${line}\n`);
    },
  });
  if (json) io.stdout(JSON.stringify(r, null, 2) + "\n");
  else {
    const mins = Math.floor(r.virtualMs / 60_000);
    const secs = Math.round((r.virtualMs % 60_000) / 1000);
    io.stdout(
      [
        "",
        `Execution report: ${r.reportPath}`,
        `Review:           ${r.reviewVerdict} (${r.reviewPath})`,
        `Outcome:          ${r.end}${stale ? " (operator does not re-render)" : ""}`,
        `Report verdict:   ${r.reportVerdict}`,
        `Virtual duration: ${mins}m ${secs}s`,
        "",
      ].join("\n"),
    );
  }
  const expected = stale ? "not-landed" : "completed";
  return r.end === expected ? EXIT.ok : EXIT.refused;
}
