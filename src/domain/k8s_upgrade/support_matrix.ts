/**
 * Which Kubernetes versions each Talos minor supports: the range Talos itself enforces before
 * `talosctl upgrade-k8s` (`MinimumKubernetesVersion` / `MaximumKubernetesVersion`), read from
 * siderolabs/talos `pkg/machinery/compatibility/talos1NN/talos1NN.go` at commit ad8823176e75
 * (v1.14.0-beta.1-84, 2026-08-21). The release catalogue (`catalogue/talos.yaml`) carries the same
 * windows for plan checks; this table is what the executor re-checks against the Talos minor the
 * nodes actually run, so a catalogue edit cannot widen it. A minor not listed is unknown and holds.
 */
import { type Version } from "../version.ts";

/** One Talos minor's supported Kubernetes window, both ends inclusive as major.minor. */
export interface SupportWindow {
  readonly talos: string;
  readonly minKubernetes: string;
  readonly maxKubernetes: string;
}

/** Talos minor → supported Kubernetes minors (source in the module comment). */
export const TALOS_KUBERNETES_SUPPORT: readonly SupportWindow[] = [
  { talos: "1.10", minKubernetes: "1.28", maxKubernetes: "1.33" },
  { talos: "1.11", minKubernetes: "1.29", maxKubernetes: "1.34" },
  { talos: "1.12", minKubernetes: "1.30", maxKubernetes: "1.35" },
  { talos: "1.13", minKubernetes: "1.31", maxKubernetes: "1.36" },
  { talos: "1.14", minKubernetes: "1.32", maxKubernetes: "1.37" },
  { talos: "1.15", minKubernetes: "1.33", maxKubernetes: "1.38" },
];

function minorNumber(mm: string): number {
  return Number(mm.split(".")[1]);
}

/** The window of a running Talos version's minor; undefined when the table does not know it. */
export function supportWindow(talos: Version): SupportWindow | undefined {
  return TALOS_KUBERNETES_SUPPORT.find((w) => w.talos === `${talos.major}.${talos.minor}`);
}

/** True when `kubernetes`'s minor lies inside `w` (Talos compares major.minor.patch ≤ x.y.99). */
export function inSupportWindow(w: SupportWindow, kubernetes: Version): boolean {
  return kubernetes.major === 1 && kubernetes.minor >= minorNumber(w.minKubernetes) &&
    kubernetes.minor <= minorNumber(w.maxKubernetes);
}
