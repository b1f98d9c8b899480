/**
 * An executor world in one process (`src/app/inproc_rollout.ts`) on the home-ops fixtures: the
 * twin's own models behind the in-process Kube and Talos ports, a libSQL `:memory:` journal, the
 * example plan (optionally cut or edited) bound and approved, its bound files read from this
 * repository, deterministic journal ids and a memory logger. No sockets, no child processes: a
 * 7-node rollout runs in well under a second.
 */
import { join } from "node:path";
import { parse } from "yaml";
import { workingTreeBoundFiles } from "../../src/adapters/repo/bound_file_reader.ts";
import { startInprocRollout } from "../../src/app/inproc_rollout.ts";
import type { AuthorityInputs } from "../../src/engine/executor/run_plan.ts";
import type { BoundPlan, ExecutionObserver } from "../../src/engine/executor/deps.ts";
import type { OperatingSettings } from "../../src/engine/operating/hold.ts";
import type { RolloutOutcome } from "../../src/engine/executor/rollout.ts";
import type { Journal, OperationDetail } from "../../src/ports/journal.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../src/sim/cluster_description.ts";
import type { Fault } from "../../src/sim/faults.ts";
import type { InprocTwin } from "../../src/sim/inproc/cluster.ts";
import { counterIds } from "./journal_world.ts";
import { MemoryLogger } from "./memory_logger.ts";
import { onlyNodes, ROOT } from "./twin_world.ts";

export interface InprocWorldOptions {
  /** Plan nodes to keep, in plan order (default: all seven). */
  readonly nodes?: readonly string[];
  readonly faults?: readonly Fault[];
  readonly seed?: number;
  /** Edits the cluster description before the twin starts. */
  readonly editCluster?: (d: ClusterDescription) => ClusterDescription;
  /** Replaces the plan text before it is parsed. */
  readonly editPlan?: (text: string) => string;
  /** An existing journal (a controller restart shares it); default a fresh `:memory:` one. */
  readonly journal?: Journal;
  /** Journal write-point hook (crash tests). */
  readonly writePoint?: (name: string) => Promise<void>;
  /** Overrides of what the dispatch check reads (trust root, bound files, installers). */
  readonly authority?: Partial<AuthorityInputs>;
  /** Reuse this twin instead of starting one (a restarted controller, same cluster). */
  readonly twin?: InprocTwin;
  /** Default windows, continuations (docs/operating.md). */
  readonly operating?: OperatingSettings;
}

export interface InprocWorld {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly bound: BoundPlan;
  readonly log: MemoryLogger;
  run(
    opts?: { owner?: string; signal?: AbortSignal; observer?: ExecutionObserver },
  ): Promise<RolloutOutcome>;
  /** Every operation of the plan, in full. */
  operations(): Promise<OperationDetail[]>;
  close(): Promise<void>;
}

let description: ClusterDescription | undefined;
let planText: string | undefined;
const PLAN_PATH = join(ROOT, "plans/talos-v1.14.2.yaml");

/** The home-ops cluster description, parsed once per test module. */
export async function homeOps(): Promise<ClusterDescription> {
  description ??= ClusterDescriptionSchema.parse(
    parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
  return structuredClone(description);
}

export async function startInprocWorld(o: InprocWorldOptions = {}): Promise<InprocWorld> {
  const description = o.editCluster ? o.editCluster(await homeOps()) : await homeOps();
  planText ??= await Deno.readTextFile(PLAN_PATH);
  let text = o.nodes ? onlyNodes(...o.nodes)(planText) : planText;
  if (o.editPlan) text = o.editPlan(text);
  const log = new MemoryLogger();
  const r = await startInprocRollout({
    description,
    planBytes: new TextEncoder().encode(text),
    planFile: PLAN_PATH,
    // The gate uses the plan's bound health policy, read from this repository.
    authority: { files: workingTreeBoundFiles(PLAN_PATH), ...o.authority },
    log,
    ids: counterIds("w"),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.faults ? { faults: o.faults } : {}),
    ...(o.journal ? { journal: o.journal } : {}),
    ...(o.writePoint ? { writePoint: o.writePoint } : {}),
    ...(o.twin ? { twin: o.twin } : {}),
    ...(o.operating ? { operating: o.operating } : {}),
  });
  return {
    twin: r.twin,
    journal: r.journal,
    bound: r.bound,
    log,
    run: (opts = {}) => r.run({ ...opts, owner: opts.owner ?? "ctl_test" }),
    async operations() {
      const ops = (await r.journal.listOperations()).filter((op) =>
        op.planDigest === r.bound.digest
      );
      return Promise.all(ops.map(async (op) => (await r.journal.showOperation(op.id))!));
    },
    close: () => r.close(),
  };
}
