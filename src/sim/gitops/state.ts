/**
 * The model behind the generated home-ops GitOps repositories: one version per pin set of each
 * protected component (the playbooks' pin sets), optional per-pin overrides (a bump that moved
 * only some pins), and the deliberate deviations a change dropped. `render.ts` turns a state into
 * files; `bumps.ts` turns a state into the next one the way Renovate would. Pure and
 * deterministic: the seed picks the starting patch levels.
 */
import { seededRandom } from "../seeded_random.ts";

/** A version as the generator moves it; `v` says whether its tags carry a leading `v`. */
export interface SimVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/** `component/pinSet` → the version every pin of that set carries. */
export type PinSetKey = string;

/** The repository's state. */
export interface HomeOpsState {
  readonly versions: Readonly<Record<PinSetKey, SimVersion>>;
  /** `component/pinSet/pin` → a version that pin alone carries (a partial move). */
  readonly pinOverrides: Readonly<Record<string, SimVersion>>;
  /** `component/deviationId` of deviations the repository no longer has. */
  readonly dropped: readonly string[];
  /** The talhelper CLI pinned in `.mise.toml` (a companion edit of a Talos minor). */
  readonly talhelper: SimVersion;
}

/** The starting minor of every pin set; the seed picks the patch. */
export const BASE_LINES: Readonly<Record<PinSetKey, readonly [number, number]>> = {
  "talos/talos": [1, 14],
  "kubernetes/kubernetes": [1, 36],
  "cilium/chart": [1, 18],
  "rook-ceph/rook": [1, 20],
  "rook-ceph/csi-drivers": [0, 5],
  "flux/flux": [0, 33],
  "cert-manager/chart": [1, 19],
  "external-secrets/external-secrets": [1, 1],
  "external-secrets/onepassword-connect": [2, 0],
  "coredns/chart": [1, 45],
  "spegel/chart": [0, 4],
  "cloudnative-pg/operator": [0, 26],
  "cloudnative-pg/postgres-image": [18, 1],
  "cloudnative-pg/barman-cloud": [0, 9],
  "gpu-operator/chart": [25, 10],
  "envoy-gateway/chart": [1, 6],
  "envoy-gateway/gateway-api": [1, 4],
  "tuppr/chart": [0, 5],
  "volsync/volsync": [0, 14],
  "volsync/snapshot-controller": [4, 1],
  "litellm-operator/chart": [0, 3],
  "miroir/chart": [0, 2],
};

/** Options of {@link initialState}. */
export interface InitialStateOptions {
  readonly seed: number;
  /** Start some pin sets on another line, e.g. `{"rook-ceph/rook": [1, 19]}`. */
  readonly lines?: Readonly<Record<PinSetKey, readonly [number, number]>>;
}

/** A repository as it stands before any bump; the same seed gives the same state. */
export function initialState(opts: InitialStateOptions): HomeOpsState {
  const rand = seededRandom(opts.seed);
  const versions: Record<PinSetKey, SimVersion> = {};
  for (const key of Object.keys(BASE_LINES).sort()) {
    const [major, minor] = opts.lines?.[key] ?? BASE_LINES[key]!;
    versions[key] = { major, minor, patch: Math.floor(rand() * 4) };
  }
  for (const key of Object.keys(opts.lines ?? {})) {
    if (!(key in BASE_LINES)) throw new RangeError(`no pin set ${key} in the generated repository`);
  }
  return {
    versions,
    pinOverrides: {},
    dropped: [],
    talhelper: { major: 3, minor: 0, patch: Math.floor(rand() * 20) },
  };
}

/** `1.20.3`. */
export function plain(v: SimVersion): string {
  return `${v.major}.${v.minor}.${v.patch}`;
}

/** `v1.20.3`. */
export function vtag(v: SimVersion): string {
  return `v${plain(v)}`;
}

/** The version pin `component/pinSet/pin` carries in `state`. */
export function pinVersion(state: HomeOpsState, pinSet: PinSetKey, pin: string): SimVersion {
  const v = state.pinOverrides[`${pinSet}/${pin}`] ?? state.versions[pinSet];
  if (!v) throw new RangeError(`no pin set ${pinSet}`);
  return v;
}

/** True while the repository still has deviation `component/id`. */
export function keeps(state: HomeOpsState, deviation: string): boolean {
  return !state.dropped.includes(deviation);
}
