/**
 * The cluster connection and the health policy file for every entry point that runs a plan
 * (`cairn apply`, `cairn plan preview`, `cairn recover`, the reconciler, rehearsals, the demo).
 * Binding and running the plan is the engine's (`engine/executor/run_plan.ts`). Heavy adapters
 * are imported lazily.
 */
import { CairnError } from "../domain/errors.ts";
import { parseHealthPolicy } from "../domain/health/policy_parse.ts";
import type { HealthPolicy } from "../domain/health/policy_parse.ts";
import type { Kube } from "../ports/kube.ts";
import type { Talos } from "../ports/talos.ts";

/** Reads and parses a health policy file. */
export async function loadHealthPolicy(path: string): Promise<HealthPolicy> {
  const r = parseHealthPolicy(await Deno.readTextFile(path), path);
  if (!r.ok) throw new CairnError(r.problems[0]!);
  return r.policy;
}

/** Where the cluster is. */
export interface ClusterTarget {
  readonly kubeconfigPath: string;
  readonly talosconfigPath: string;
  readonly talosContext?: string;
}

/** The cluster's adapters. */
export interface ClusterConnection {
  readonly kube: Kube;
  readonly talos: Talos;
  close(): void;
}

export async function connectCluster(target: ClusterTarget): Promise<ClusterConnection> {
  const { createClientNodeKube } = await import("../adapters/kube/client_node_kube.ts");
  const { createGrpcTalos } = await import("../adapters/talos/grpc_talos.ts");
  const { loadTalosconfig } = await import("../adapters/talos/talosconfig.ts");
  const kube = await createClientNodeKube({ kubeconfigPath: target.kubeconfigPath });
  const talos = await createGrpcTalos({
    context: await loadTalosconfig(target.talosconfigPath, target.talosContext),
  });
  return { kube, talos, close: () => talos.close() };
}
