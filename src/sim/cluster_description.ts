import { createHash } from "node:crypto";
import { z } from "../domain/zod.ts";

/**
 * A cluster description (`fixtures/clusters/*.yaml`): what the twin starts from. Nodes carry both
 * their Kubernetes and their Talos facts; `objects` are plain Kubernetes objects (as
 * `kubectl get -o yaml` prints them, status included) that the Kubernetes simulator loads as-is.
 */
export const SimNodeSchema = z.strictObject({
  name: z.string().min(1),
  role: z.enum(["controlplane", "worker"]),
  /**
   * The machine's address: what plans declare as `spec.nodes[].address` and what the twin's apid
   * routes `node` metadata by (every endpoint itself listens on loopback). Unique per node.
   */
  address: z.string().regex(/^[0-9A-Za-z.:-]+$/),
  /**
   * SMBIOS system UUID of the machine (Talos `SystemInformations.hardware.talos.dev` `uuid`,
   * Kubernetes `status.nodeInfo.systemUUID`). Default: derived from the node name.
   */
  machineUuid: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    .optional(),
  talosVersion: z.string().regex(/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/),
  kubeletVersion: z.string().regex(/^v\d+\.\d+\.\d+$/),
  /** Image Factory schematic id (64 hex) running on the node. */
  schematic: z.string().regex(/^[0-9a-f]{64}$/),
  arch: z.enum(["amd64", "arm64"]).default("amd64"),
  platform: z.string().default("metal"),
  /** Virtual seconds from a reboot request until the node is back and Ready. */
  rebootSeconds: z.number().int().positive().default(90),
  /** Virtual seconds an install (LifecycleService.Upgrade) takes. */
  installSeconds: z.number().int().positive().default(40),
  /** Virtual seconds an image pull takes. */
  pullSeconds: z.number().int().positive().default(15),
  labels: z.record(z.string(), z.string()).default({}),
  unschedulable: z.boolean().default(false),
  ready: z.boolean().default(true),
});

export const ClusterDescriptionSchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("ClusterDescription"),
  metadata: z.strictObject({ name: z.string().min(1) }),
  spec: z.strictObject({
    /** Kubernetes version the API server reports. */
    kubernetesVersion: z.string().regex(/^v\d+\.\d+\.\d+$/),
    /** Start of virtual time (RFC 3339). */
    startTime: z.string().default("2026-12-01T09:00:00Z"),
    nodes: z.array(SimNodeSchema).min(1),
    /**
     * Installer images the twin's registry serves (`host/repository:tag`, no digest): each as an
     * OCI index for linux/amd64 and linux/arm64 whose bytes, and so digests, are fixed by the
     * reference (`sim/registry/installer_images.ts`).
     */
    installerImages: z.array(z.string().min(1)).default([]),
    objects: z.array(z.record(z.string(), z.unknown())).default([]),
    /**
     * Models the Kubernetes components (sim/talos/k8s_components.ts, sim/kube/bootstrap.ts):
     * machine configurations naming each component's image, control-plane static pods (mirror
     * pods, Talos StaticPodStatuses), kube-proxy and the bootstrap manifests with Talos's
     * managedFields, the manifest inventory (or its absence), and requests to deprecated APIs.
     * Absent: none of these exist (the descriptions of Talos rollouts stay as they were).
     */
    kubernetesComponents: z.strictObject({
      inventory: z.enum(["present", "missing"]).default("present"),
      /** Virtual seconds a replaced static pod (or a restarted kubelet) takes to be ready. */
      restartSeconds: z.number().int().positive().default(20),
      /** Requests the apiserver counts as to deprecated APIs (`apiserver_requested_deprecated_apis`). */
      deprecatedApiRequests: z.array(z.strictObject({
        group: z.string(),
        version: z.string(),
        resource: z.string(),
        removedRelease: z.string(),
      })).default([]),
    }).optional(),
    /**
     * What products' health endpoints answer through the API server's proxy subresource (an
     * object store's S3 root on its service, each broker server's monitoring port on its pod):
     * not Kubernetes objects, so described apart (`sim/kube/proxy_routes.ts`).
     */
    routes: z.array(
      z.strictObject({
        namespace: z.string().min(1),
        pod: z.string().min(1).optional(),
        service: z.string().min(1).optional(),
        port: z.string().min(1),
        path: z.string().startsWith("/"),
        status: z.number().int().min(100).max(599),
        body: z.string(),
      }).refine((r) => (r.pod === undefined) !== (r.service === undefined), {
        message: "a route names exactly one of pod or service",
      }),
    ).default([]),
  }),
}).superRefine((d, ctx) => {
  // Two nodes with one name or one address would make routing and identity ambiguous.
  for (const key of ["name", "address", "machineUuid"] as const) {
    const seen = new Set<string>();
    d.spec.nodes.forEach((n, i) => {
      const v = n[key];
      if (v === undefined) return;
      if (seen.has(v)) {
        ctx.addIssue({
          code: "custom",
          path: ["spec", "nodes", i, key],
          message: `${key} ${v} is used by two nodes`,
        });
      }
      seen.add(v);
    });
  }
});

export type SimNode = z.output<typeof SimNodeSchema>;
export type ClusterDescription = z.output<typeof ClusterDescriptionSchema>;

/** A UUID-shaped value from a hash of `seed` (stable across runs). */
export function hashedUuid(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${
    h.slice(20, 32)
  }`;
}

/** The machine's SMBIOS system UUID as both sides of the twin report it. */
export function machineUuidOf(n: Pick<SimNode, "name" | "machineUuid">): string {
  return n.machineUuid ?? hashedUuid(`boot/uuid/${n.name}/0`);
}
