/**
 * The Kubernetes version skew policy (kubernetes.io/releases/version-skew-policy, as of 1.28+):
 * - kube-apiserver instances of one cluster are at most one minor apart;
 * - kubelet and kube-proxy are never newer than any kube-apiserver and at most three minors older
 *   than the newest one (apiservers at 1.32 and 1.31 allow kubelets 1.29 to 1.31);
 * - kube-controller-manager and kube-scheduler are never newer than any kube-apiserver they may
 *   talk to (behind a load balancer: all of them) and at most one minor older.
 * Pure: judges a snapshot of observed component versions; an unread version is reported apart
 * (it holds) and never counts as within the policy.
 */
import { compareVersions, parseVersion, type Version } from "../version.ts";

/** The components whose version the policy relates. */
export type Component =
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kubelet"
  | "kube-proxy";

/** One observed component version (undefined: it could not be read). */
export interface ComponentVersion {
  readonly component: Component;
  /** Node it runs on (`cluster` for kube-proxy's DaemonSet image). */
  readonly node: string;
  readonly version: string | undefined;
}

/** A broken rule of the policy, naming both sides. */
export interface SkewViolation {
  readonly component: Component;
  readonly node: string;
  readonly detail: string;
}

function minorsBehind(newer: Version, older: Version): number {
  return (newer.major - older.major) * 1000 + newer.minor - older.minor;
}

/** Every violation of the policy among the versions read; unread versions are skipped. */
export function skewViolations(observed: readonly ComponentVersion[]): SkewViolation[] {
  const read = observed.filter((o) => o.version !== undefined)
    .map((o) => ({ ...o, v: parseVersion(o.version!) }));
  const apiservers = read.filter((o) => o.component === "kube-apiserver");
  if (apiservers.length === 0) return [];
  const sorted = apiservers.slice().sort((a, b) => compareVersions(a.v, b.v));
  const oldest = sorted[0]!;
  const newest = sorted[sorted.length - 1]!;
  const out: SkewViolation[] = [];
  if (minorsBehind(newest.v, oldest.v) > 1) {
    out.push({
      component: "kube-apiserver",
      node: newest.node,
      detail: `kube-apiserver ${newest.version} on ${newest.node} and ${oldest.version} on ` +
        `${oldest.node} are more than one minor apart`,
    });
  }
  for (const o of read) {
    if (o.component === "kube-apiserver") continue;
    const window = o.component === "kubelet" || o.component === "kube-proxy" ? 3 : 1;
    if (minorsBehind(o.v, oldest.v) > 0 && compareVersions(o.v, oldest.v) > 0) {
      out.push({
        component: o.component,
        node: o.node,
        detail: `${o.component} ${o.version} on ${o.node} is newer than kube-apiserver ` +
          `${oldest.version} on ${oldest.node}`,
      });
    } else if (minorsBehind(newest.v, o.v) > window) {
      out.push({
        component: o.component,
        node: o.node,
        detail: `${o.component} ${o.version} on ${o.node} is more than ${window} minor(s) older ` +
          `than kube-apiserver ${newest.version} on ${newest.node}`,
      });
    }
  }
  return out;
}
