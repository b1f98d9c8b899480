/**
 * The Talos machine API as cairn's core sees it: one call per node, every call bounded by a
 * deadline, domain-shaped values. Types only; `src/adapters/talos/` implements it over gRPC.
 *
 * Reads throw `CairnError` with a `Talos*` reason (the adapter may reconnect and retry a read
 * within its deadline). Mutations (pull, upgrade, legacy upgrade, reboot, apply configuration)
 * never throw for a failed call and are never retried by the adapter: they return a
 * `TalosMutation` whose `outcome` says what is known about whether the request took effect, so
 * the executor can record it and classify an unknown outcome as `unresolved`.
 */
import type { Reason } from "../domain/reasons.ts";

/** Bounds of one call. */
export interface TalosCallOptions {
  /** Wall-clock milliseconds this call may take (the remaining phase time, converted). */
  readonly timeoutMs: number;
  /** Aborts the call (the outcome of an aborted mutation is unknown). */
  readonly signal?: AbortSignal;
  /**
   * How many times a read refused UNAVAILABLE is sent before it fails (default the client's, 3).
   * A caller that polls anyway asks once: its next poll is the retry, and a machine that is down
   * answers no sooner for being asked three times through its apid proxy.
   */
  readonly attempts?: number;
}

/** `common.ContainerdInstance`; pull and upgrade must use the same one. */
export interface ContainerdInstance {
  readonly driver: "CONTAINERD" | "CRI";
  readonly namespace: "NS_SYSTEM" | "NS_CRI";
}

/** What talosctl uses by default (`--namespace system`). */
export type ContainerdPreset = "system" | "inmem" | "cri";

export interface TalosVersion {
  readonly tag: string;
  readonly sha: string;
  readonly arch: string;
  readonly platform: string;
}

export interface TalosService {
  readonly id: string;
  /** Running, Finished, Failed, … */
  readonly state: string;
  readonly healthy: boolean;
  /** Health not yet known (no check has run). */
  readonly healthUnknown: boolean;
  readonly lastMessage: string;
}

export interface EtcdMember {
  /** uint64 as a decimal string. */
  readonly id: string;
  readonly hostname: string;
  readonly peerUrls: readonly string[];
  readonly clientUrls: readonly string[];
  readonly isLearner: boolean;
}

export interface EtcdMemberStatus {
  readonly memberId: string;
  readonly leader: string;
  readonly raftIndex: string;
  readonly raftTerm: string;
  readonly isLearner: boolean;
  readonly errors: readonly string[];
  readonly protocolVersion: string;
  readonly dbSize: string;
}

/** Reboot modes of `RebootRequest.Mode`. */
export type RebootMode = "DEFAULT" | "POWERCYCLE" | "FORCE";

/** `ApplyConfigurationRequest.Mode`; always set explicitly (the proto default is REBOOT). */
export type ApplyMode = "REBOOT" | "AUTO" | "NO_REBOOT" | "STAGED" | "TRY";

export interface ApplyConfigurationRequest {
  readonly data: Uint8Array;
  readonly mode: ApplyMode;
  readonly dryRun: boolean;
  readonly tryModeTimeoutMs?: number;
}

/**
 * What is known about a mutation's effect:
 * - `ok`: the server answered; `value` holds its answer.
 * - `rejected`: the server refused before acting (permission, invalid argument, precondition such
 *   as an install lock, unimplemented). Nothing happened because of this call.
 * - `sent-no-response`: the request was sent but no (complete) answer came back (deadline, stream
 *   cut, cancelled). It may have taken or may still take effect.
 * - `transport-failure`: the connection failed (unavailable, internal transport error); the
 *   request may or may not have reached the node.
 * - `not-sent`: the adapter never sent it (the signal was already aborted).
 */
export type TalosOutcome =
  | "ok"
  | "rejected"
  | "sent-no-response"
  | "transport-failure"
  | "not-sent";

export interface TalosFailure {
  readonly outcome: Exclude<TalosOutcome, "ok">;
  readonly reason: Reason;
  /** gRPC status code (numeric) or -1 when none was received. */
  readonly grpcCode: number;
  readonly message: string;
  readonly node: string;
  /** Full gRPC method name, e.g. `/machine.MachineService/Reboot`. */
  readonly method: string;
}

export type TalosMutation<T> =
  | { readonly outcome: "ok"; readonly value: T }
  | (TalosFailure & { readonly partial?: T });

export interface PullResult {
  /** The reference name containerd stored (`name` of the final stream item). */
  readonly name: string;
}

export interface InstallResult {
  /** The installer's exit code (0 = success; v1.14 classifies 1–7). */
  readonly exitCode: number;
  /** Installer output re-split into whole lines (v1.13 chunks and v1.14 lines alike). */
  readonly lines: readonly string[];
  /** The tag from `installation of <tag> complete`, when printed. */
  readonly completedTag: string | undefined;
}

export interface LegacyUpgradeResult {
  readonly ack: string;
  readonly actorId: string;
}

export interface RebootResult {
  readonly actorId: string;
}

export interface ApplyConfigurationResult {
  readonly mode: ApplyMode;
  readonly modeDetails: string;
  readonly warnings: readonly string[];
}

/** Coordinates of a COSI resource (`cosi.resource.State/Get`). */
export interface CosiResourceRef {
  readonly namespace: string;
  readonly type: string;
  readonly id: string;
}

/** A COSI resource as read: its version and the spec as YAML (Talos fills `yaml_spec`). */
export interface CosiResource extends CosiResourceRef {
  readonly version: string;
  readonly yamlSpec: string;
}

/** The Talos port. `node` is the target sent as `node` metadata (name or address). */
export interface Talos {
  version(node: string, opts: TalosCallOptions): Promise<TalosVersion>;
  serviceList(node: string, opts: TalosCallOptions): Promise<readonly TalosService[]>;
  /** Control planes only (workers: TalosNotControlPlane). */
  etcdMembers(node: string, opts: TalosCallOptions): Promise<readonly EtcdMember[]>;
  etcdStatus(node: string, opts: TalosCallOptions): Promise<EtcdMemberStatus>;
  /** `/proc/sys/kernel/random/boot_id` via MachineService.Read (admin), trimmed. */
  bootId(node: string, opts: TalosCallOptions): Promise<string>;
  /** One COSI resource through `cosi.resource.State/Get` (reader role for cluster resources). */
  resource(node: string, ref: CosiResourceRef, opts: TalosCallOptions): Promise<CosiResource>;

  pull(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<PullResult>>;
  /** LifecycleService.Upgrade: install to the other slot; does not reboot. */
  upgrade(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions & { readonly onProgress?: (line: string) => void },
  ): Promise<TalosMutation<InstallResult>>;
  /** Legacy MachineService.Upgrade (Talos outside `>1.13.0-alpha.2 <2.0.0`); installs and reboots. */
  legacyUpgrade(
    node: string,
    imageRef: string,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<LegacyUpgradeResult>>;
  reboot(
    node: string,
    mode: RebootMode,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<RebootResult>>;
  applyConfiguration(
    node: string,
    req: ApplyConfigurationRequest,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<ApplyConfigurationResult>>;
  /** Closes every connection; later calls reconnect. */
  close(): void;
}
