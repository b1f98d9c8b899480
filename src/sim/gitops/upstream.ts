/**
 * What the generated repositories' upstream artifacts bundle: the Ceph image a rook-ceph-cluster
 * chart defaults to, the cephcsi version the rook-ceph operator chart's ceph-csi-operator
 * compiles in, the Flux distribution inside a flux-operator-manifests artifact. The shape follows
 * the real lines (Squid to Tentacle rode Rook v1.19 to v1.20; Rook v1.20 to v1.21 moved cephcsi
 * v3.17.1 to v3.18.1; a manifests minor moves the Flux minor); patches within a line bundle the
 * same companion. `renderBundledVersions` writes the snapshot the review reads
 * (`domain/playbook/bundled.ts`).
 */
import { stringify } from "yaml";
import type { SimVersion } from "./state.ts";
import { vtag } from "./state.ts";

/** Ceph major bundled per Rook minor. */
const CEPH_BY_ROOK_MINOR: Readonly<Record<number, string>> = {
  18: "v18.2.7",
  19: "v19.2.3",
  20: "v20.2.0",
  21: "v20.2.1",
  22: "v21.2.0",
  23: "v21.2.1",
};

/** cephcsi bundled per Rook minor. */
const CEPHCSI_BY_ROOK_MINOR: Readonly<Record<number, string>> = {
  18: "v3.13.1",
  19: "v3.15.0",
  20: "v3.17.1",
  21: "v3.18.1",
  22: "v3.19.0",
  23: "v3.20.0",
};

/** The Ceph image tag the rook-ceph-cluster chart at `rook` defaults to. */
export function bundledCeph(rook: SimVersion): string | undefined {
  return rook.major === 1 ? CEPH_BY_ROOK_MINOR[rook.minor] : undefined;
}

/** The cephcsi version the rook-ceph operator chart at `rook` runs by default. */
export function bundledCephcsi(rook: SimVersion): string | undefined {
  return rook.major === 1 ? CEPHCSI_BY_ROOK_MINOR[rook.minor] : undefined;
}

/** The Flux distribution inside flux-operator-manifests at `manifests`. */
export function bundledFlux(manifests: SimVersion): string | undefined {
  if (manifests.major !== 0 || manifests.minor < 30) return undefined;
  return `v2.${manifests.minor - 26}.${manifests.minor % 3}`;
}

/** One snapshot entry. */
interface Entry {
  artifact: string;
  tag: string;
  version: string;
  source: string;
}

/**
 * The bundled-versions snapshot for every tag the generator can reach: Rook v1.18–v1.23 and
 * manifests v0.30–v0.38, patches 0–15.
 */
export function renderBundledVersions(): string {
  const entries: Entry[] = [];
  for (let minor = 18; minor <= 23; minor++) {
    for (let patch = 0; patch <= 15; patch++) {
      const rook = { major: 1, minor, patch };
      entries.push({
        artifact: "rook-ceph-cluster",
        tag: vtag(rook),
        version: bundledCeph(rook)!,
        source: "charts/rook-ceph-cluster/values.yaml cephClusterSpec.cephVersion.image",
      });
      entries.push({
        artifact: "rook-ceph",
        tag: vtag(rook),
        version: bundledCephcsi(rook)!,
        source: "ceph-csi-operator internal/controller/defaults.go at the subchart's tag",
      });
    }
  }
  for (let minor = 30; minor <= 38; minor++) {
    for (let patch = 0; patch <= 15; patch++) {
      const m = { major: 0, minor, patch };
      entries.push({
        artifact: "flux-operator-manifests",
        tag: vtag(m),
        version: bundledFlux(m)!,
        source: "flux-images/VERSION",
      });
    }
  }
  return "# Generated bundled versions of the simulated upstream artifacts.\n" + stringify({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "BundledVersions",
    metadata: { name: "simulated-upstream", date: "2026-11-25" },
    spec: { entries },
  }, { lineWidth: 0 });
}
