/**
 * Where going back is harder than re-pinning a version, per protected component (from the
 * component playbooks, seed 004), in our own short words. Reports show the caveats of every
 * component a plan touches, so reviewers see before merging what a rollback cannot undo.
 */

/** Components with playbook entries. */
export const COMPONENTS = [
  "talos",
  "kubernetes",
  "cilium",
  "rook-ceph",
  "flux",
  "cert-manager",
  "external-secrets",
  "coredns",
  "spegel",
  "cloudnative-pg",
  "gpu-operator",
  "envoy-gateway",
  "tuppr",
  "volsync",
  "litellm-operator",
  "miroir",
] as const;

/** A component id. */
export type Component = (typeof COMPONENTS)[number];

/** One caveat line per component. */
export const ROLLBACK_CAVEATS: Readonly<Record<Component, string>> = {
  talos:
    "A minor that carries an etcd major is one-way: once a node boots it, rolling back to the old minor is no longer possible. Within a minor, rollback switches to the other boot image. Move all five version pins together, and never reboot every control plane at once.",
  kubernetes:
    "One-way in practice: etcd data written by the newer API server cannot be taken back a minor in place.",
  cilium:
    "Rolls back one minor at most; BPF state survives agent restarts, so nodes may need a reboot after the chart is reverted.",
  "rook-ceph":
    "Re-pin the operator and cluster sources together and restart the CSI controller so plugins actually roll back; never revert the release files. A Ceph major does not roll back with the chart.",
  flux:
    "The manifests artifact and both operator and instance charts move together; re-pin all three, or a regression survives an artifact-only revert.",
  "cert-manager": "CRD downgrades are unsupported; a bad minor is fixed forward.",
  "external-secrets": "Revert the tag; the store CRD is stable across patches.",
  coredns: "Nothing beyond re-pinning the tag.",
  spegel: "Nothing beyond the tag; pulls fall back to the upstream registry while it is down.",
  "cloudnative-pg":
    "The operator can go back one minor; a Postgres image cannot go back a major, nor a minor once the newer one opened the data directory.",
  "gpu-operator": "Nothing beyond the tag; the RuntimeClass belongs to the repository.",
  "envoy-gateway":
    "Gateway API CRDs stay at the newer version; confirm the older release supports them before reverting.",
  tuppr: "Nothing beyond the tag, provided no upgrade is in flight.",
  volsync:
    "Check the Kopia version inside the mover image before going back more than a patch; the repository format is only forward-compatible within a major.",
  "litellm-operator":
    "If the CRD moved, the older operator may reject newer CR fields; revert the CR in the same change.",
  miroir: "A chart revert leaves the loop-file volumes on the nodes untouched.",
};
