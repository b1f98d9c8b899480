/**
 * The cluster connection and the health policy file for every entry point that runs a plan
 * (`cairn apply`, `cairn plan preview`, `cairn recover`, the reconciler, rehearsals, the demo).
 * Binding and running the plan is the engine's (`engine/executor/run_plan.ts`). Heavy adapters
 * are imported lazily.
 */
import type { KubeconfigFiles } from "../adapters/kube/kubeconfig_files.ts";
import { CairnError } from "../domain/errors.ts";
import { parseHealthPolicy } from "../domain/health/policy_parse.ts";
import type { HealthPolicy } from "../domain/health/policy_parse.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import type { Plan } from "../domain/plan/schema.ts";
import type { Kube } from "../ports/kube.ts";
import type { Talos } from "../ports/talos.ts";

/**
 * A health policy named on the command line is accepted only when it is the bound one, byte for
 * byte: the bound policy is the policy. Throws `HealthPolicyOverrideMismatch` naming both digests.
 */
export async function requireBoundPolicy(path: string, plan: Plan): Promise<void> {
  const bound = plan.spec.healthPolicy;
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
  const sha = await sha256Hex(bytes);
  if (sha === bound.sha256) return;
  throw new CairnError({
    reason: "HealthPolicyOverrideMismatch",
    message: `--health-policy ${path} has digest ${sha}, but the plan binds ${bound.path} with ` +
      `digest ${bound.sha256}; the bound policy is the policy`,
  });
}

/** Reads and parses a health policy file. */
export async function loadHealthPolicy(path: string): Promise<HealthPolicy> {
  const r = parseHealthPolicy(await Deno.readTextFile(path), path);
  if (!r.ok) throw new CairnError(r.problems[0]!);
  return r.policy;
}

/** Where the cluster is. */
export interface ClusterTarget {
  /** One file, or a KUBECONFIG list merged as kubectl merges it. */
  readonly kubeconfigPath: KubeconfigFiles;
  readonly talosconfigPath: string;
  readonly talosContext?: string;
  /** The kubeconfig context to use instead of the file's current one. */
  readonly kubeContext?: string;
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
  const kube = await createClientNodeKube({
    kubeconfigPath: target.kubeconfigPath,
    ...(target.kubeContext ? { context: target.kubeContext } : {}),
  });
  const talos = await createGrpcTalos({
    context: await loadTalosconfig(target.talosconfigPath, target.talosContext),
  });
  return { kube, talos, close: () => talos.close() };
}
