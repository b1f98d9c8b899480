/**
 * Renovate-like changes to a generated repository's state: a clean bump moves every pin of a
 * pin set to the next patch, minor or major; the mistakes a tired reviewer misses are separate
 * steps a test composes (`movePinsOnly`: 3 of the 5 Talos pins; `dropDeviation`: a values file
 * regenerated from the chart defaults). Pure; `git_repo.ts` commits the rendered result.
 */
import type { HomeOpsState, PinSetKey, SimVersion } from "./state.ts";
import { vtag } from "./state.ts";

export type BumpKind = "patch" | "minor" | "major";

/** The pin set a component's Renovate pull request moves by default. */
export const PRIMARY_PIN_SET: Readonly<Record<string, PinSetKey>> = {
  "cert-manager": "cert-manager/chart",
  cilium: "cilium/chart",
  "cloudnative-pg": "cloudnative-pg/operator",
  coredns: "coredns/chart",
  "envoy-gateway": "envoy-gateway/chart",
  "external-secrets": "external-secrets/external-secrets",
  flux: "flux/flux",
  "gpu-operator": "gpu-operator/chart",
  kubernetes: "kubernetes/kubernetes",
  "litellm-operator": "litellm-operator/chart",
  miroir: "miroir/chart",
  "rook-ceph": "rook-ceph/rook",
  spegel: "spegel/chart",
  talos: "talos/talos",
  tuppr: "tuppr/chart",
  volsync: "volsync/volsync",
};

/** The next version of `v` for a bump of `kind`. */
export function nextVersion(v: SimVersion, kind: BumpKind): SimVersion {
  switch (kind) {
    case "patch":
      return { ...v, patch: v.patch + 1 };
    case "minor":
      return { major: v.major, minor: v.minor + 1, patch: 0 };
    case "major":
      return { major: v.major + 1, minor: 0, patch: 0 };
  }
}

/** A bump: the new state and the commit message Renovate would write. */
export interface BumpResult {
  readonly state: HomeOpsState;
  readonly message: string;
  readonly from: SimVersion;
  readonly to: SimVersion;
}

/** Moves every pin of `pinSet` by `kind` (clearing any per-pin override), like Renovate's group. */
export function renovateBump(state: HomeOpsState, pinSet: PinSetKey, kind: BumpKind): BumpResult {
  const from = state.versions[pinSet];
  if (!from) throw new RangeError(`no pin set ${pinSet}`);
  const to = nextVersion(from, kind);
  const pinOverrides = Object.fromEntries(
    Object.entries(state.pinOverrides).filter(([k]) => !k.startsWith(`${pinSet}/`)),
  );
  const [component, set] = pinSet.split("/") as [string, string];
  const type = kind === "major" ? "feat!" : kind === "minor" ? "feat" : "fix";
  return {
    state: { ...state, versions: { ...state.versions, [pinSet]: to }, pinOverrides },
    message: `${type}(${component}): update ${set} group ( ${vtag(from)} → ${vtag(to)} )`,
    from,
    to,
  };
}

/** Moves only `pins` of `pinSet` by `kind`; the others keep the old version (a partial move). */
export function movePinsOnly(
  state: HomeOpsState,
  pinSet: PinSetKey,
  pins: readonly string[],
  kind: BumpKind,
): BumpResult {
  const from = state.versions[pinSet];
  if (!from) throw new RangeError(`no pin set ${pinSet}`);
  const to = nextVersion(from, kind);
  const pinOverrides = { ...state.pinOverrides };
  for (const pin of pins) pinOverrides[`${pinSet}/${pin}`] = to;
  return {
    state: { ...state, pinOverrides },
    message: `fix(${pinSet.split("/")[0]}): update ${pins.join(", ")} ( ${vtag(from)} → ${
      vtag(to)
    } )`,
    from,
    to,
  };
}

/** The repository without deviation `component/id` (a regenerated or blindly reverted file). */
export function dropDeviation(state: HomeOpsState, deviation: string): HomeOpsState {
  return state.dropped.includes(deviation)
    ? state
    : { ...state, dropped: [...state.dropped, deviation].sort() };
}

/** Moves the talhelper CLI pin (the companion edit of a Talos minor). */
export function bumpTalhelper(state: HomeOpsState, kind: BumpKind): HomeOpsState {
  return { ...state, talhelper: nextVersion(state.talhelper, kind) };
}
