/**
 * What `cairn recover` wires: the clock (the wall clock, or a twin's virtual clock for rehearsals
 * and tests), the cluster connection a decision reads (and, for an uncordon, writes), and the
 * health evidence a classification reads under the operation's own bound policy. The decisions
 * themselves are the engine's (`engine/recovery/`); the command only turns flags into values.
 */
import type { KubeconfigFiles } from "../adapters/kube/kubeconfig_files.ts";
import type { Clock } from "../ports/clock.ts";
import type { Journal } from "../ports/journal.ts";
import type { Talos } from "../ports/talos.ts";
import type { RecoveryCluster } from "../engine/recovery/recover_actions.ts";
import type { DecisionResult } from "../engine/recovery/recover_decisions.ts";

/** Virtual time from a twin (rehearsals, tests) or the wall clock. */
export interface RecoveryRuntime {
  readonly clock: Clock;
  readonly timeoutClock?: Clock;
  readonly wrap: <T extends object>(port: T) => T;
  readonly callTimeoutMs: (ms: number) => number;
}

/** The wall clock, or the twin's clock behind `twinControl` (its calls keep the twin in step). */
export async function recoveryRuntime(twinControl?: string): Promise<RecoveryRuntime> {
  if (!twinControl) {
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    return { clock: new SystemClock(), wrap: (p) => p, callTimeoutMs: (ms) => ms };
  }
  const { syncingPort, TwinClock } = await import("../adapters/clock/twin_clock.ts");
  const clock = await TwinClock.connect(twinControl);
  return {
    clock,
    timeoutClock: clock.forTimeouts(20_000),
    wrap: (p) => syncingPort(p, clock),
    callTimeoutMs: (ms) => Math.min(ms, 20_000),
  };
}

/** Where the cluster is; without a talosconfig only Kubernetes is reachable (an uncordon). */
export interface RecoveryTarget {
  readonly kubeconfig: KubeconfigFiles;
  readonly talosconfig?: string;
  readonly talosContext?: string;
  readonly kubeContext?: string;
}

/** Connects the Kubernetes client and, when a talosconfig is given, the Talos client. */
export async function connectRecoveryCluster(
  rt: RecoveryRuntime,
  target: RecoveryTarget,
): Promise<{ cluster: RecoveryCluster; close: () => void }> {
  const { createClientNodeKube } = await import("../adapters/kube/client_node_kube.ts");
  const kube = rt.wrap(
    await createClientNodeKube({
      kubeconfigPath: target.kubeconfig,
      ...(target.kubeContext ? { context: target.kubeContext } : {}),
    }),
  );
  let talos: Talos | undefined;
  if (target.talosconfig) {
    const { createGrpcTalos } = await import("../adapters/talos/grpc_talos.ts");
    const { loadTalosconfig } = await import("../adapters/talos/talosconfig.ts");
    const context = await loadTalosconfig(target.talosconfig, target.talosContext);
    talos = await createGrpcTalos({ context });
  }
  const cluster: RecoveryCluster = {
    kube,
    ...(talos ? { talos: rt.wrap(talos) } : {}),
    clock: rt.clock,
    callTimeoutMs: rt.callTimeoutMs,
  };
  return { cluster, close: () => talos?.close() };
}

/**
 * Classifies an operation on a completion observation with fresh health rounds. The health
 * policy given must be the one the operation's plan binds (the bound policy is the policy).
 */
export async function classifyWithBoundPolicy(
  journal: Journal,
  cluster: RecoveryCluster,
  rt: RecoveryRuntime,
  o: {
    readonly operationId: string;
    readonly actor: string;
    readonly policyPath: string;
    /** Where warnings go (one JSON line each). */
    readonly writeLog: (line: string) => void;
  },
): Promise<DecisionResult> {
  const { loadHealthPolicy, requireBoundPolicy } = await import("./run_plan.ts");
  const { ClusterEvidence } = await import("../engine/health/cluster_evidence.ts");
  const { JsonLogger } = await import("../adapters/log/json_logger.ts");
  const { classifyOperation } = await import("../engine/recovery/recover_decisions.ts");
  const { needTalos } = await import("../engine/recovery/recover_actions.ts");
  const op = await journal.getOperation(o.operationId);
  const record = op ? await journal.getPlan(op.planDigest) : undefined;
  // Talos reads go to the addresses the plan declares, as the executor's do.
  const addresses = new Map<string, string>();
  if (record) {
    const { parsePlan } = await import("../domain/plan/parse.ts");
    const bytes = new TextEncoder().encode(record.bytes);
    const plan = (await parsePlan(bytes, { file: record.name })).plan;
    await requireBoundPolicy(o.policyPath, plan);
    if (plan.kind === "TalosUpgrade") {
      for (const n of plan.spec.nodes) addresses.set(n.name, n.address);
    }
  }
  const policy = await loadHealthPolicy(o.policyPath);
  const evidence = new ClusterEvidence(cluster.kube, needTalos(cluster), rt.clock, addresses);
  try {
    return await classifyOperation(journal, cluster, {
      policy,
      evidence,
      ...(rt.timeoutClock ? { timeoutClock: rt.timeoutClock } : {}),
      intervalMs: 30_000,
      pollIntervalMs: 5_000,
      log: new JsonLogger({ write: o.writeLog, clock: rt.clock, level: "warn" }),
    }, { operationId: o.operationId, actor: o.actor });
  } finally {
    evidence.stop();
  }
}
