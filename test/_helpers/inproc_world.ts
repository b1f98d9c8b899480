/**
 * An executor world in one process: the twin's own models behind the in-process Kube and Talos
 * ports (`src/sim/inproc/`), a libSQL `:memory:` journal through the real journal adapter, the
 * example plan bound and approved, and the executor wired by the same `executePlan` the CLI and
 * reconciler use. No sockets, no child processes: a 7-node rollout runs in well under a second.
 */
import { join } from "node:path";
import { parse } from "yaml";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../src/adapters/repo/bound_file_reader.ts";
import { type AuthorityInputs, bindPlan, executePlan } from "../../src/engine/executor/run_plan.ts";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import type { BoundPlan } from "../../src/engine/executor/deps.ts";
import type { RolloutOutcome } from "../../src/engine/executor/rollout.ts";
import type { Journal, OperationDetail } from "../../src/ports/journal.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../src/sim/cluster_description.ts";
import type { Fault } from "../../src/sim/faults.ts";
import { type InprocTwin, startInprocTwin } from "../../src/sim/inproc/cluster.ts";
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
}

export interface InprocWorld {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly bound: BoundPlan;
  readonly log: MemoryLogger;
  run(opts?: { owner?: string; signal?: AbortSignal }): Promise<RolloutOutcome>;
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
  const desc = o.editCluster ? o.editCluster(await homeOps()) : await homeOps();
  const twin = o.twin ?? startInprocTwin({
    description: desc,
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.faults ? { faults: o.faults } : {}),
  });
  if (o.twin) { for (const f of o.faults ?? []) twin.faults.arm(f); }
  const journal = o.journal ?? await openJournal({
    url: ":memory:",
    ids: counterIds("w"),
    nowMs: twin.clock.now(),
    ...(o.writePoint ? { writePoint: o.writePoint } : {}),
  });
  planText ??= await Deno.readTextFile(PLAN_PATH);
  let text = o.nodes ? onlyNodes(...o.nodes)(planText) : planText;
  if (o.editPlan) text = o.editPlan(text);
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: PLAN_PATH });
  const bound = await bindPlan(journal, {
    parsed,
    bytes,
    signatures: "",
    firstSeenCommit: "test",
    approver: { identity: "bob@example.com", role: "approver" },
    nowMs: twin.clock.now(),
  });
  const log = new MemoryLogger();
  return {
    twin,
    journal,
    bound,
    log,
    run: (r = {}) =>
      executePlan({
        journal,
        bound,
        cluster: { kube: twin.kube, talos: twin.talos },
        // The gate uses the plan's bound health policy, read from this repository.
        authority: {
          bytes,
          signatures: "",
          requiredApprovals: 1,
          files: workingTreeBoundFiles(PLAN_PATH),
          ...o.authority,
        },
        clock: twin.clock,
        timeoutClock: twin.timeoutClock,
        // Virtual time is the only time here: a call's budget is the phase's own.
        callTimeoutMs: (ms) => ms,
        pollIntervalMs: 5_000,
        roundIntervalMs: 30_000,
        log,
        owner: r.owner ?? "ctl_test",
        ...(r.signal ? { signal: r.signal } : {}),
      }),
    async operations() {
      const ops = (await journal.listOperations()).filter((op) => op.planDigest === bound.digest);
      return Promise.all(ops.map(async (op) => (await journal.showOperation(op.id))!));
    },
    async close() {
      twin.stop();
      if (!o.journal) await journal.close();
    },
  };
}
