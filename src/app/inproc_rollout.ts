/**
 * A TalosUpgrade rollout in one process: the twin's own models behind the in-process Kube and
 * Talos ports (`sim/inproc/`), a libSQL journal (`:memory:` unless one is given) through the real
 * journal adapter, the plan bound and approved, and the executor wired by the same `executePlan`
 * the CLI and the reconciler use. No sockets, no child processes, no wall clock: the executor's
 * unit tests, the in-process benchmark and (issue 16) seeded simulation campaigns build on it.
 */
import { openJournal } from "../adapters/journal/libsql_journal.ts";
import { parsePlan } from "../domain/plan/parse.ts";
import type { BoundPlan, ExecutionObserver, ExecutorDeps } from "../engine/executor/deps.ts";
import type { OperatingSettings } from "../engine/operating/hold.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";
import type { SelfHosting } from "../engine/leadership/self_hosting.ts";
import { type AuthorityInputs, bindPlan, executePlan } from "../engine/executor/run_plan.ts";
import type { IdSource } from "../ports/clock.ts";
import type { Journal } from "../ports/journal.ts";
import type { Logger } from "../ports/logger.ts";
import type { ClusterDescription } from "../sim/cluster_description.ts";
import type { Fault } from "../sim/faults.ts";
import { type InprocTwin, startInprocTwin } from "../sim/inproc/cluster.ts";

export interface InprocRolloutOptions {
  readonly description: ClusterDescription;
  readonly planBytes: Uint8Array;
  /** Where the plan came from, for located errors. */
  readonly planFile: string;
  /**
   * What the dispatch check reads besides the plan bytes (the bound files — the health policy
   * that gates comes from there —, trust root, installers); signatures default to none,
   * required approvals to 1 and installers to the in-process twin's registry.
   */
  readonly authority:
    & Omit<AuthorityInputs, "bytes" | "signatures" | "requiredApprovals">
    & Partial<Pick<AuthorityInputs, "signatures" | "requiredApprovals">>;
  readonly log: Logger;
  /** Seeds the Talos model (boot IDs, etcd member IDs); default 1. */
  readonly seed?: number;
  readonly faults?: readonly Fault[];
  /** Journal ids (deterministic in tests); default counter-based `<prefix>_<n>`. */
  readonly ids?: IdSource;
  /** An existing journal (a restarted controller shares it); default a fresh `:memory:` one. */
  readonly journal?: Journal;
  /** Journal write-point hook (crash tests); only for a journal opened here. */
  readonly writePoint?: (name: string) => Promise<void>;
  /** An existing in-process twin (the same cluster for another controller). */
  readonly twin?: InprocTwin;
  /** Default windows and the like (docs/operating.md). */
  readonly operating?: OperatingSettings;
}

export interface InprocRollout {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly bound: BoundPlan;
  /** Runs the rollout as controller `owner` (default `ctl_inproc`). */
  run(
    opts?: {
      readonly owner?: string;
      readonly signal?: AbortSignal;
      readonly observer?: ExecutionObserver;
      /** This controller's self-hosting check (it runs as a pod of the cluster). */
      readonly selfHosting?: SelfHosting;
    },
  ): Promise<RolloutOutcome>;
  /** Stops the twin's operators and closes a journal opened here. */
  close(): Promise<void>;
}

/** Ids `<prefix>_<n>`: the same run gives the same journal. */
export function counterIdSource(): IdSource {
  let n = 0;
  return { newId: (prefix) => `${prefix}_${String(++n).padStart(8, "0")}` };
}

/**
 * How the executor waits and bounds its calls in process: the cluster's virtual time is the only
 * time, so a call's budget is the phase's own (in virtual ms), waits move virtual time (5 s
 * polls, 30 s rounds as in production) and read timeouts wait on it without moving it.
 */
export function inprocExecutionTiming(twin: InprocTwin) {
  return {
    clock: twin.clock,
    timeoutClock: twin.timeoutClock,
    callTimeoutMs: (ms: number) => ms,
    pollIntervalMs: 5_000,
    roundIntervalMs: 30_000,
  };
}

/** The in-process twin as the executor's cluster. */
export function inprocCluster(twin: InprocTwin): Pick<ExecutorDeps, "kube" | "talos"> {
  return { kube: twin.kube, talos: twin.talos };
}

/** Starts the twin (unless given), opens the journal, binds and approves the plan. */
export async function startInprocRollout(o: InprocRolloutOptions): Promise<InprocRollout> {
  const twin = o.twin ?? startInprocTwin({
    description: o.description,
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.faults ? { faults: o.faults } : {}),
  });
  if (o.twin) { for (const f of o.faults ?? []) twin.faults.arm(f); }
  const journal = o.journal ?? await openJournal({
    url: ":memory:",
    ids: o.ids ?? counterIdSource(),
    nowMs: twin.clock.now(),
    ...(o.writePoint ? { writePoint: o.writePoint } : {}),
  });
  const parsed = await parsePlan(o.planBytes, { file: o.planFile });
  const bound = await bindPlan(journal, {
    parsed,
    bytes: o.planBytes,
    signatures: o.authority.signatures ?? "",
    firstSeenCommit: "inproc",
    approver: { identity: "inproc-approver", role: "approver" },
    nowMs: twin.clock.now(),
  });
  return {
    twin,
    journal,
    bound,
    run: (r = {}) =>
      executePlan({
        journal,
        bound,
        cluster: inprocCluster(twin),
        authority: {
          bytes: o.planBytes,
          signatures: "",
          requiredApprovals: 1,
          // Installers resolve against the twin's registry, as in rehearsals and the demo.
          installers: twin.registry.resolver,
          ...o.authority,
        },
        ...inprocExecutionTiming(twin),
        log: o.log,
        owner: r.owner ?? "ctl_inproc",
        ...(r.signal ? { signal: r.signal } : {}),
        ...(r.selfHosting ? { selfHosting: r.selfHosting } : {}),
        ...(r.observer ? { observer: r.observer } : {}),
        ...(o.operating ? { operating: o.operating } : {}),
      }),
    async close() {
      if (!o.twin) twin.stop();
      if (!o.journal) await journal.close();
    },
  };
}
