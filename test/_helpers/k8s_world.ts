/**
 * A KubernetesUpgrade world on the in-process twin: home-ops with its Kubernetes components
 * modelled (`kubernetesComponents`), the example plan for the twin's Talos version, parsed.
 */
import { join } from "node:path";
import { type ParsedPlan, parsePlan } from "../../src/domain/plan/parse.ts";
import type { KubernetesUpgradePlan } from "../../src/domain/plan/schema.ts";
import type { ClusterDescription } from "../../src/sim/cluster_description.ts";
import type { Fault } from "../../src/sim/faults.ts";
import { type InprocTwin, startInprocTwin } from "../../src/sim/inproc/cluster.ts";
import { homeOps } from "./inproc_world.ts";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../src/adapters/repo/bound_file_reader.ts";
import {
  counterIdSource,
  inprocCluster,
  inprocExecutionTiming,
} from "../../src/app/inproc_rollout.ts";
import {
  bindKubernetesUpgrade,
  executeKubernetesUpgrade,
} from "../../src/engine/k8s_upgrade/run.ts";
import { MemoryLogger } from "./memory_logger.ts";
import type { ExecutionObserver } from "../../src/engine/executor/deps.ts";
import { ROOT } from "./twin_world.ts";
import type { ExecuteOptions } from "../../src/engine/executor/run_plan.ts";
import type { OperatingSettings } from "../../src/engine/operating/hold.ts";

export const K8S_PLAN_PATH = join(ROOT, "plans/kubernetes-v1.36.0-talos-v1.13.9.yaml");

export type K8sComponents = NonNullable<ClusterDescription["spec"]["kubernetesComponents"]>;

export const COMPONENTS: K8sComponents = {
  inventory: "present",
  restartSeconds: 20,
  deprecatedApiRequests: [],
};

/** home-ops with the components modelled (and optional edits). */
export async function k8sDescription(
  k8s: Partial<K8sComponents> = {},
  edit?: (d: ClusterDescription) => void,
): Promise<ClusterDescription> {
  const d = await homeOps();
  d.spec.kubernetesComponents = { ...COMPONENTS, ...k8s };
  edit?.(d);
  return d;
}

export async function k8sTwin(
  o: { k8s?: Partial<K8sComponents>; faults?: Fault[]; edit?: (d: ClusterDescription) => void } =
    {},
): Promise<InprocTwin> {
  return startInprocTwin({
    description: await k8sDescription(o.k8s, o.edit),
    ...(o.faults ? { faults: o.faults } : {}),
  });
}

/** The example plan, optionally edited. */
export async function k8sPlan(
  edit: (text: string) => string = (t) => t,
): Promise<{ parsed: ParsedPlan; plan: KubernetesUpgradePlan; bytes: Uint8Array }> {
  const bytes = new TextEncoder().encode(edit(await Deno.readTextFile(K8S_PLAN_PATH)));
  const parsed = await parsePlan(bytes, { file: K8S_PLAN_PATH });
  return { parsed, plan: parsed.plan as KubernetesUpgradePlan, bytes };
}

/** The example plan bound in a `:memory:` journal against the twin; `run` executes it. */
export async function k8sRollout(
  o: {
    faults?: Fault[];
    edit?: (d: ClusterDescription) => void;
    planEdit?: (t: string) => string;
    /** Overrides of the dispatch authority (the repository's files, signatures, trust root). */
    authority?: Partial<ExecuteOptions["authority"]>;
    /** Windows, continuations, the Alertmanager (docs/operating.md). */
    operating?: OperatingSettings;
  } = {},
) {
  const twin = await k8sTwin({
    ...(o.faults ? { faults: o.faults } : {}),
    ...(o.edit ? { edit: o.edit } : {}),
  });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIdSource(),
    nowMs: twin.clock.now(),
  });
  const { parsed, bytes } = await k8sPlan(o.planEdit);
  const bound = await bindKubernetesUpgrade(journal, {
    parsed,
    bytes,
    signatures: "",
    firstSeenCommit: "inproc",
    approver: { identity: "inproc-approver", role: "approver" },
    nowMs: twin.clock.now(),
  });
  const log = new MemoryLogger();
  const run = (
    r: {
      readonly owner?: string;
      readonly signal?: AbortSignal;
      readonly observer?: ExecutionObserver;
    } = {},
  ) =>
    executeKubernetesUpgrade({
      journal,
      bound,
      cluster: inprocCluster(twin),
      authority: {
        bytes,
        signatures: "",
        requiredApprovals: 1,
        files: workingTreeBoundFiles(K8S_PLAN_PATH),
        ...o.authority,
      },
      ...(o.operating ? { operating: o.operating } : {}),
      ...inprocExecutionTiming(twin),
      log,
      owner: r.owner ?? "ctl_test",
      ...(r.signal ? { signal: r.signal } : {}),
      ...(r.observer ? { observer: r.observer } : {}),
    });
  return {
    twin,
    journal,
    bound,
    log,
    run,
    async close() {
      twin.stop();
      await journal.close();
    },
  };
}
