/**
 * Per-node Talos state for the twin, on the shared virtual clock: what runs, what the bootloader
 * would boot next, what an installer wrote, and how reboots and installs take time. The gRPC
 * server (`server.ts`) translates calls into these methods; faults that change what the machine
 * *does* (as opposed to what the wire does) are taken here.
 *
 * Bootloader model (protocols.md A4, GRUB `flip()`): an install writes the slot that is NOT the
 * current default and makes it the default; the old default becomes the fallback. A second
 * install before a reboot therefore overwrites the slot the node is still running from.
 */
import type { SimClock } from "../clock.ts";
import type { Fault, FaultKind, FaultSchedule } from "../faults.ts";
import {
  type ClusterDescription,
  hashedUuid,
  machineUuidOf,
  type SimNode,
} from "../cluster_description.ts";
import { seededRandom } from "../seeded_random.ts";
import { initialMachineConfig, MachineConfigState } from "./machine_config.ts";
import { NodeComponents, type StaticPodReport, withComponentImages } from "./k8s_components.ts";

/** gRPC status codes the model raises (numbers are the wire values). */
export const GRPC = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** An error the server returns as a gRPC status. */
export class TalosSimError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = "TalosSimError";
  }
}

export interface BootEntry {
  readonly version: string;
  readonly schematic: string;
}

export type Slot = "A" | "B";
export type Stage = "running" | "rebooting" | "down" | "booting";

export interface ServiceState {
  readonly id: string;
  state: string;
  healthy: boolean;
  lastMessage: string;
}

export interface ContainerdRef {
  readonly driver: string;
  readonly namespace: string;
}

/** What the kubelet on a machine reports about it (status.nodeInfo and the schematic). */
export interface KubeletReport {
  readonly bootId: string;
  readonly osImage: string;
  readonly kubeletVersion: string;
  readonly schematic?: string;
  /** SMBIOS system UUID (`nodeInfo.systemUUID`). */
  readonly systemUuid?: string;
  /** `/etc/machine-id` of the installed OS (`nodeInfo.machineID`). */
  readonly machineId?: string;
}

/** What the Kubernetes side learns when a node goes down or comes back. */
export interface NodeStatusSink {
  nodeDown(name: string): void;
  nodeUp(name: string, info: KubeletReport): void;
  /** The node's static pods as its kubelet reports them (mirror pods); absent: not modelled. */
  staticPods?(name: string, pods: readonly StaticPodReport[]): void;
}

/** A COSI resource as a node serves it through `cosi.resource.State/Get`. */
export interface CosiSpec {
  readonly version: string;
  readonly owner: string;
  readonly yaml: string;
}

function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20, 32)
  }`;
}

/** Parses `<registry>/<platform>-installer/<schematic>:<tag>[@sha256:…]`. */
export function parseInstallerRef(ref: string): { version: string; schematic: string } {
  const m =
    /\/[a-z0-9-]*installer(?:-secureboot)?\/([0-9a-f]{64}):(v[0-9A-Za-z.+-]+)(@sha256:[0-9a-f]{64})?$/
      .exec(ref);
  if (m) return { schematic: m[1]!, version: m[2]! };
  const plain = /:(v\d+\.\d+\.\d+[0-9A-Za-z.+-]*)(@sha256:[0-9a-f]{64})?$/.exec(ref);
  if (!plain) throw new TalosSimError(GRPC.INVALID_ARGUMENT, `cannot parse image reference ${ref}`);
  return { schematic: "", version: plain[1]! };
}

/** Minor version number of `vX.Y.Z`. */
function minorOf(version: string): number {
  return Number(/^v\d+\.(\d+)\./.exec(version)?.[1] ?? "0");
}

const MODEL_POINTS = {
  install: ["talos.install", "talos.LifecycleService.Upgrade"],
  boot: ["talos.boot", "talos.Reboot"],
  service: ["talos.service", "talos.Reboot"],
  config: ["talos.config", "talos.ApplyConfiguration"],
} as const;

/** Takes a fault of one of `kinds` armed at any of `points` for `node` (other kinds are left). */
export function takeKind(
  faults: FaultSchedule,
  points: readonly string[],
  node: string,
  kinds: readonly FaultKind[],
  nowMs: number,
): Fault | undefined {
  for (const p of points) {
    const f = faults.peek(p, node);
    if (f && kinds.includes(f.kind)) return faults.take(p, node, nowMs);
  }
  return undefined;
}

export interface ApplyConfigInput {
  readonly data: string;
  readonly mode: "REBOOT" | "AUTO" | "NO_REBOOT" | "STAGED" | "TRY";
  readonly dryRun: boolean;
  readonly tryTimeoutMs: number;
}

export interface ApplyConfigOutput {
  readonly mode: ApplyConfigInput["mode"];
  readonly modeDetails: string;
  readonly warnings: string[];
}

/** Marker line by which a simulated config change declares that it needs a reboot to apply. */
export const REQUIRES_REBOOT_MARKER = "# cairn-sim: requires-reboot";

export interface ModelContext {
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly rand: () => number;
  readonly sink: NodeStatusSink;
  /**
   * Whether the twin's registry holds an image reference: false when it serves the reference's
   * registry host but not that repository, tag or digest; undefined for a host it does not model
   * (such pulls are not judged). Absent: no registry.
   */
  readonly registryHas?: (ref: string) => boolean | undefined;
}

/** One Talos machine. */
export class TalosNode {
  readonly name: string;
  readonly role: "controlplane" | "worker";
  /** The declared address (a reused address may route to another machine: TalosCluster.find). */
  readonly address: string;
  /** SMBIOS system UUID; changes only when the machine is replaced (`machine-reimaged`). */
  machineUuid: string;
  /** `/etc/machine-id`: changes with every fresh install of the OS. */
  machineId: string;
  /** How many times this node's machine was replaced and re-imaged. */
  reimages = 0;
  readonly arch: string;
  readonly platform: string;
  kubeletVersion: string;
  rebootSeconds: number;
  installSeconds: number;
  pullSeconds: number;
  stage: Stage = "running";
  runningVersion: string;
  runningSchematic: string;
  bootId: string;
  slots: Record<Slot, BootEntry | undefined>;
  defaultSlot: Slot = "A";
  bootedSlot: Slot = "A";
  /** Installs completed since the last boot; >1 means the fallback was overwritten. */
  installsSinceBoot = 0;
  installLockUntil: number | undefined;
  readonly images = new Set<string>();
  readonly services: ServiceState[];
  etcdMemberId: string;
  /** Persistent, active and running configuration (sim/talos/machine_config.ts). */
  readonly machineConfig: MachineConfigState;
  /** The Kubernetes components it runs (descriptions with `kubernetesComponents` only). */
  k8s: NodeComponents | undefined;
  readonly history: string[] = [];
  #actor = 0;
  #unreachable: TalosSimError | undefined;

  constructor(desc: SimNode, private readonly ctx: ModelContext) {
    this.name = desc.name;
    this.role = desc.role;
    this.address = desc.address;
    this.machineUuid = machineUuidOf(desc);
    this.machineId = hashedUuid(`machine/${desc.name}`).replaceAll("-", "");
    this.arch = desc.arch;
    this.platform = desc.platform;
    this.kubeletVersion = desc.kubeletVersion;
    this.rebootSeconds = desc.rebootSeconds;
    this.installSeconds = desc.installSeconds;
    this.pullSeconds = desc.pullSeconds;
    this.runningVersion = desc.talosVersion;
    this.runningSchematic = desc.schematic;
    this.slots = { A: { version: desc.talosVersion, schematic: desc.schematic }, B: undefined };
    this.bootId = uuid(ctx.rand);
    this.machineConfig = new MachineConfigState(
      initialMachineConfig({ role: desc.role, talosVersion: desc.talosVersion }),
    );
    this.etcdMemberId = BigInt(Math.floor(ctx.rand() * 2 ** 53)).toString();
    const ids = ["apid", "containerd", "cri", "kubelet", "machined", "trustd", "udevd"];
    if (desc.role === "controlplane") ids.push("etcd");
    this.services = ids.sort().map((id) => ({
      id,
      state: "Running",
      healthy: true,
      lastMessage: "",
    }));
  }

  /** What the kubelet on this machine reports. */
  kubeletReport(): KubeletReport {
    return {
      bootId: this.bootId,
      osImage: `Talos (${this.runningVersion})`,
      kubeletVersion: this.kubeletVersion,
      schematic: this.runningSchematic,
      systemUuid: this.machineUuid,
      machineId: this.machineId,
    };
  }

  /**
   * The machine behind this node was replaced and the new one installed with the same hostname,
   * address and versions: a new SMBIOS UUID, machine-id and boot; the kubelet re-registers the
   * Node under the same name with the new facts.
   */
  reimage(): void {
    this.reimages++;
    this.machineUuid = hashedUuid(`reimaged/${this.name}/${this.reimages}`);
    this.machineId = hashedUuid(`machine/${this.name}/${this.reimages}`).replaceAll("-", "");
    this.bootId = hashedUuid(`boot/${this.name}/reimaged/${this.reimages}`);
    this.history.push(`machine replaced and re-imaged (uuid ${this.machineUuid})`);
    this.ctx.sink.nodeUp(this.name, this.kubeletReport());
  }

  get defaultEntry(): BootEntry | undefined {
    return this.slots[this.defaultSlot];
  }

  get fallbackEntry(): BootEntry | undefined {
    return this.slots[other(this.defaultSlot)];
  }

  /** Uses the 1.14 API semantics (ApplyConfiguration, installer output framing). */
  get is114(): boolean {
    return minorOf(this.runningVersion) >= 14;
  }

  /**
   * Raises UNAVAILABLE when apid could not reach this node (down or still booting). The error is
   * made once per node and thrown again: its code and message depend only on the address, which
   * never changes, and the servers only read them (an Error costs a few microseconds to build, and
   * a client polling a rebooting node met one per call, about 1 % of a DST seed, issue 16).
   */
  assertReachable(): void {
    if (this.stage === "down" || this.stage === "booting") {
      throw this.#unreachable ??= new TalosSimError(
        GRPC.UNAVAILABLE,
        `connection error: dial tcp ${this.address}:50000: connect: connection refused`,
      );
    }
  }

  isLocked(): boolean {
    return this.installLockUntil !== undefined && this.installLockUntil > this.ctx.clock.now();
  }

  newActorId(): string {
    this.#actor++;
    return `${this.name}-actor-${this.#actor}`;
  }

  pull(imageRef: string, ctrd: ContainerdRef): { alreadyPresent: boolean; ms: number } {
    validateContainerd(ctrd);
    this.#requireInRegistry(imageRef);
    const key = `${ctrd.driver}/${ctrd.namespace}/${imageRef}`;
    const alreadyPresent = this.images.has(key);
    return { alreadyPresent, ms: alreadyPresent ? 0 : this.pullSeconds * 1000 };
  }

  /**
   * A pull of an image the registry does not hold fails before anything is stored, as
   * containerd's "failed to resolve reference … not found" (the twin answers NOT_FOUND).
   */
  #requireInRegistry(imageRef: string): void {
    if (this.ctx.registryHas?.(imageRef) === false) {
      throw new TalosSimError(
        GRPC.NOT_FOUND,
        `failed to pull image "${imageRef}": failed to resolve reference: not found`,
      );
    }
  }

  /** Records a pulled image (called when the pull's virtual time has passed). */
  finishPull(imageRef: string, ctrd: ContainerdRef): void {
    this.images.add(`${ctrd.driver}/${ctrd.namespace}/${imageRef}`);
    this.history.push(`pull ${imageRef}`);
  }

  /**
   * Starts an install. Returns synchronously once the single-flight lock is taken (so a rejected
   * second caller gets FAILED_PRECONDITION at once); `done` resolves with the installer's exit
   * code after installSeconds of virtual time, whether or not anybody still listens.
   */
  startInstall(
    imageRef: string,
    ctrd: ContainerdRef,
    output: (line: string) => void,
  ): { done: Promise<number> } {
    validateContainerd(ctrd);
    if (!imageRef) throw new TalosSimError(GRPC.INVALID_ARGUMENT, "image_name is required");
    const clock = this.ctx.clock;
    if (this.isLocked()) {
      throw new TalosSimError(
        GRPC.FAILED_PRECONDITION,
        "another installation/upgrade is already in progress",
      );
    }
    // Validation comes first, as in the real service: a refused request writes nothing.
    if (
      takeKind(this.ctx.faults, MODEL_POINTS.install, this.name, ["install-invalid"], clock.now())
    ) {
      throw new TalosSimError(
        GRPC.INVALID_ARGUMENT,
        "upgrade request is not valid: installer image validation failed (simulated)",
      );
    }
    const lockFault = takeKind(this.ctx.faults, MODEL_POINTS.install, this.name, [
      "install-lock-held",
    ], clock.now());
    if (lockFault) {
      const ms = Number(lockFault.params?.["durationMs"] ?? this.installSeconds * 1000);
      this.installLockUntil = clock.now() + ms;
      throw new TalosSimError(
        GRPC.FAILED_PRECONDITION,
        "another installation/upgrade is already in progress",
      );
    }
    if (!this.images.has(`${ctrd.driver}/${ctrd.namespace}/${imageRef}`)) {
      throw new TalosSimError(
        GRPC.INTERNAL,
        `upgrade failed: installer image ${imageRef} not found in containerd store`,
      );
    }
    const target = parseInstallerRef(imageRef);
    const fails = takeKind(
      this.ctx.faults,
      MODEL_POINTS.install,
      this.name,
      ["install-fails"],
      clock.now(),
    );
    const ms = this.installSeconds * 1000;
    this.installLockUntil = clock.now() + ms;
    this.history.push(`install-start ${target.version}`);
    output(`running installer for ${target.version} on ${this.name}`);
    const done = new Promise<number>((resolve) => {
      clock.schedule(
        Math.floor(ms / 2),
        () => output(`writing boot slot ${other(this.defaultSlot)}`),
      );
      clock.schedule(ms, () => {
        this.installLockUntil = undefined;
        if (fails) {
          const code = Number(fails.params?.["exitCode"] ?? 7);
          output(`error: install failed (simulated)`);
          this.history.push(`install-failed ${code}`);
          resolve(code);
          return;
        }
        this.writeInstall({
          version: target.version,
          schematic: target.schematic || this.runningSchematic,
        });
        output(`installation of ${target.version} complete`);
        resolve(0);
      });
    });
    return { done };
  }

  /**
   * The legacy MachineService.Upgrade path: the node pulls the image itself, installs, and then
   * reboots on success (the whole sequence runs server-side).
   */
  legacyUpgrade(imageRef: string): string {
    const ctrd = { driver: "CRI", namespace: "NS_SYSTEM" };
    parseInstallerRef(imageRef);
    this.#requireInRegistry(imageRef);
    if (!this.isLocked()) this.finishPull(imageRef, ctrd);
    const { done } = this.startInstall(imageRef, ctrd, () => {});
    void done.then((code) => {
      if (code === 0) this.reboot("DEFAULT");
    });
    return this.newActorId();
  }

  /** GRUB flip: write the non-default slot and make it the default. */
  writeInstall(entry: BootEntry): void {
    const target = other(this.defaultSlot);
    this.slots[target] = entry;
    this.defaultSlot = target;
    this.installsSinceBoot++;
    this.history.push(`install ${entry.version} -> slot ${target}`);
  }

  /** Starts an asynchronous reboot; the node goes down after 1 s and returns after rebootSeconds. */
  reboot(mode: string): string {
    const clock = this.ctx.clock;
    const actor = this.newActorId();
    // A reboot request while one is already under way joins it (one boot, one new boot ID).
    if (this.stage === "rebooting") {
      this.history.push(`reboot ${mode} (already rebooting)`);
      return actor;
    }
    this.stage = "rebooting";
    this.history.push(`reboot ${mode}`);
    clock.schedule(1000, () => {
      this.stage = "down";
      this.ctx.sink.nodeDown(this.name);
    });
    clock.schedule(Math.max(this.rebootSeconds * 1000, 1001), () => this.#boot());
    return actor;
  }

  #boot(): void {
    const clock = this.ctx.clock;
    const f = takeKind(this.ctx.faults, MODEL_POINTS.boot, this.name, [
      "no-return-from-reboot",
      "boots-old-version",
    ], clock.now());
    if (f?.kind === "no-return-from-reboot") {
      this.history.push("boot never returned");
      return;
    }
    const slot = f?.kind === "boots-old-version" ? other(this.defaultSlot) : this.defaultSlot;
    const entry = this.slots[slot] ?? this.slots[this.defaultSlot]!;
    this.bootedSlot = slot;
    this.runningVersion = entry.version;
    this.runningSchematic = entry.schematic;
    this.bootId = uuid(this.ctx.rand);
    this.installsSinceBoot = 0;
    this.machineConfig.boot();
    this.#configActivated();
    this.stage = "running";
    this.history.push(`booted ${entry.version} from slot ${slot}`);
    this.#applyServiceFault();
    this.ctx.sink.nodeUp(this.name, this.kubeletReport());
  }

  #applyServiceFault(): void {
    const clock = this.ctx.clock;
    const f = takeKind(
      this.ctx.faults,
      MODEL_POINTS.service,
      this.name,
      ["service-unhealthy"],
      clock.now(),
    );
    if (!f) return;
    const id = String(f.params?.["service"] ?? "kubelet");
    const svc = this.services.find((s) => s.id === id);
    if (!svc) return;
    svc.healthy = false;
    svc.lastMessage = "simulated: health check failing";
    clock.schedule(Number(f.params?.["durationMs"] ?? 300_000), () => {
      svc.healthy = true;
      svc.lastMessage = "";
    });
  }

  /** The running configuration may have changed: its components follow it. */
  #configActivated(): void {
    this.k8s?.configChanged(this.machineConfig.active, this.kubeletVersion);
  }

  /** The kubelet restarted at `version` (a new kubelet image in the running configuration). */
  kubeletRestarted(version: string): void {
    this.kubeletVersion = version;
    this.history.push(`kubelet restarted at ${version}`);
    if (this.stage === "running") this.ctx.sink.nodeUp(this.name, this.kubeletReport());
  }

  /** ApplyConfiguration with the semantics of the running version (protocols.md A3). */
  applyConfiguration(input: ApplyConfigInput): ApplyConfigOutput {
    const needsReboot = input.data.includes(REQUIRES_REBOOT_MARKER);
    const effective = this.#effectiveMode(input.mode, needsReboot);
    if (input.dryRun) {
      return {
        mode: effective,
        modeDetails: `Dry run: would apply in ${effective} mode`,
        warnings: [],
      };
    }
    this.history.push(`apply-config ${input.mode} -> ${effective}`);
    const mc = this.machineConfig;
    if (effective === "STAGED") mc.stage(input.data);
    else {
      const deferred = takeKind(this.ctx.faults, MODEL_POINTS.config, this.name, [
        "config-activation-deferred",
      ], this.ctx.clock.now()) !== undefined;
      if (effective === "TRY") {
        const previous = mc.active;
        mc.activate(input.data, { persist: false, deferred });
        this.ctx.clock.schedule(
          input.tryTimeoutMs || 60_000,
          () => {
            mc.activate(previous, { persist: false, deferred: false });
            this.#configActivated();
          },
        );
        this.#configActivated();
      } else {
        mc.activate(input.data, { persist: true, deferred });
        if (effective === "REBOOT") this.reboot("DEFAULT");
        else this.#configActivated();
      }
    }
    return {
      mode: effective,
      modeDetails: `Applied configuration in ${effective} mode`,
      warnings: [],
    };
  }

  #effectiveMode(mode: ApplyConfigInput["mode"], needsReboot: boolean): ApplyConfigInput["mode"] {
    if (this.is114) {
      if (mode === "REBOOT") {
        throw new TalosSimError(GRPC.UNIMPLEMENTED, "REBOOT mode is not supported");
      }
      return mode === "AUTO" ? "NO_REBOOT" : mode;
    }
    if (mode === "AUTO") return needsReboot ? "REBOOT" : "NO_REBOOT";
    if (mode === "NO_REBOOT" && needsReboot) {
      throw new TalosSimError(
        GRPC.INVALID_ARGUMENT,
        "apply configuration failed: configuration change requires a reboot",
      );
    }
    return mode;
  }

  /** A JSON view for the control endpoint and assertions. */
  snapshot(): Record<string, unknown> {
    return {
      name: this.name,
      role: this.role,
      address: this.address,
      machineUuid: this.machineUuid,
      machineId: this.machineId,
      stage: this.stage,
      runningVersion: this.runningVersion,
      runningSchematic: this.runningSchematic,
      bootId: this.bootId,
      defaultSlot: this.defaultSlot,
      bootedSlot: this.bootedSlot,
      defaultEntry: this.defaultEntry ?? null,
      fallbackEntry: this.fallbackEntry ?? null,
      installsSinceBoot: this.installsSinceBoot,
      installLocked: this.isLocked(),
      images: [...this.images],
      services: this.services.map((s) => ({ ...s })),
      config: this.machineConfig.active,
      stagedConfig: this.machineConfig.persistent === this.machineConfig.active
        ? null
        : this.machineConfig.persistent,
      runningTimeServers: [...this.machineConfig.runningTimeServers],
      loadedModules: [...this.machineConfig.loadedModules].sort(),
      history: [...this.history],
    };
  }
}

function other(slot: Slot): Slot {
  return slot === "A" ? "B" : "A";
}

function validateContainerd(c: ContainerdRef): void {
  if (c.namespace === "NS_UNKNOWN") {
    throw new TalosSimError(GRPC.INVALID_ARGUMENT, "containerd namespace must be set");
  }
  if (c.driver === "CONTAINERD" && c.namespace === "NS_CRI") {
    throw new TalosSimError(GRPC.INVALID_ARGUMENT, "CRI namespace requires the CRI driver");
  }
}

/** All nodes of one cluster description. */
export class TalosCluster {
  readonly nodes = new Map<string, TalosNode>();
  readonly ctx: ModelContext;
  /**
   * What every node reports as `Infos.cluster.talos.dev/current`: the description's name as
   * `cluster.clusterName`, and a stable id derived from it (a real cluster's is random).
   */
  readonly info: { readonly clusterName: string; readonly clusterId: string };

  /** Address → the machine that answers there now (a reused address answers from another). */
  readonly #routes = new Map<string, TalosNode>();

  constructor(desc: ClusterDescription, ctx: Omit<ModelContext, "rand"> & { seed?: number }) {
    this.ctx = { ...ctx, rand: seededRandom(ctx.seed ?? 1) };
    this.info = { clusterName: desc.metadata.name, clusterId: `twin-${desc.metadata.name}` };
    for (const n of desc.spec.nodes) {
      const node = new TalosNode(n, this.ctx);
      this.nodes.set(n.name, node);
      this.#routes.set(node.address, node);
    }
    const k8s = desc.spec.kubernetesComponents;
    if (k8s) {
      for (const node of this.nodes.values()) {
        const mc = node.machineConfig;
        // Every machine's configuration names its component images (a real one always does).
        mc.persistent = mc.active = withComponentImages(mc.active, {
          role: node.role,
          kubernetesVersion: desc.spec.kubernetesVersion,
          kubeletVersion: node.kubeletVersion,
        });
        node.k8s = new NodeComponents(node.name, node.role, {
          clock: this.ctx.clock,
          faults: this.ctx.faults,
          restartSeconds: k8s.restartSeconds,
          sink: {
            staticPods: (name, pods) => this.ctx.sink.staticPods?.(name, pods),
            kubeletRestarted: (name, version) => this.nodes.get(name)?.kubeletRestarted(version),
          },
        }, mc.active);
      }
    }
    // Identity faults change the world when armed, not when some call happens to pass by.
    ctx.faults.onArm(() => this.#applyIdentityFaults());
    this.#applyIdentityFaults();
  }

  /**
   * The machine a `node` target reaches. apid forwards to `<target>:50000`: an address reaches
   * whichever machine holds it now; a hostname first resolves (the twin's DNS holds each node's
   * declared address) and then does the same, so a stale name follows a reused address too.
   */
  find(target: string): TalosNode | undefined {
    const routed = this.#routes.get(target);
    if (routed) return routed;
    const declared = this.nodes.get(target)?.address;
    return declared === undefined ? undefined : this.#routes.get(declared);
  }

  /** Takes armed `address-reused` and `machine-reimaged` faults and applies them now. */
  #applyIdentityFaults(): void {
    const now = this.ctx.clock.now();
    for (const node of this.nodes.values()) {
      const moved = takeKind(this.ctx.faults, ["talos.route"], node.name, ["address-reused"], now);
      if (moved) {
        const by = this.nodes.get(String(moved.params?.["by"] ?? ""));
        if (!by || by === node) {
          throw new TalosSimError(
            GRPC.INVALID_ARGUMENT,
            `address-reused on ${node.name} needs params.by naming another node`,
          );
        }
        this.#routes.set(node.address, by);
        node.history.push(`address ${node.address} now answers from ${by.name}`);
      }
      if (takeKind(this.ctx.faults, ["talos.machine"], node.name, ["machine-reimaged"], now)) {
        node.reimage();
      }
    }
  }

  /**
   * COSI `State.Get` for the resources the twin models, as `node` serves them: the cluster's
   * `Infos.cluster.talos.dev/current` (namespace `cluster`) and the machine's SMBIOS facts
   * `SystemInformations.hardware.talos.dev/systeminformation` (namespace `hardware`, yaml
   * `uuid` among others). Anything else is NOT_FOUND, as apid answers for an unknown resource.
   */
  cosiGet(node: TalosNode, namespace: string, type: string, id: string): CosiSpec {
    if (namespace === "cluster" && type === "Infos.cluster.talos.dev" && id === "current") {
      return {
        version: "1",
        owner: "cluster.InfoController",
        yaml: `clusterId: ${this.info.clusterId}\nclusterName: ${this.info.clusterName}\n`,
      };
    }
    if (
      namespace === "hardware" && type === "SystemInformations.hardware.talos.dev" &&
      id === "systeminformation"
    ) {
      return {
        version: String(1 + node.reimages),
        owner: "hardware.SystemInfoController",
        yaml: `manufacturer: cairn twin\nproductName: ${node.platform}-${node.arch}\n` +
          `version: "1"\nserialnumber: twin-${node.machineUuid.slice(0, 8)}\n` +
          `uuid: ${node.machineUuid}\nwakeUpType: Power Switch\nskuNumber: twin\n`,
      };
    }
    const config = node.machineConfig.cosi(namespace, type, id, node.is114);
    if (config) return config;
    if (node.k8s && namespace === "k8s" && type === "StaticPodStatuses.kubernetes.talos.dev") {
      const status = node.k8s.staticPodStatus(id);
      if (status) {
        return {
          version: status.version,
          owner: "k8s.KubeletStaticPodController",
          yaml: status.yaml,
        };
      }
    }
    throw new TalosSimError(GRPC.NOT_FOUND, `resource ${type}/${id} doesn't exist`);
  }

  /** Every node reports its static pods (start-up sync with the Kubernetes side). */
  reportStaticPods(): void {
    for (const n of this.nodes.values()) n.k8s?.report();
  }

  /** The node the endpoint itself is (calls without `node` metadata): the first control plane. */
  endpointNode(): TalosNode {
    const nodes = [...this.nodes.values()];
    return nodes.find((n) => n.role === "controlplane") ?? nodes[0]!;
  }

  controlPlanes(): TalosNode[] {
    return [...this.nodes.values()].filter((n) => n.role === "controlplane");
  }

  /** The etcd leader: the first control plane that is up. */
  etcdLeader(): TalosNode | undefined {
    return this.controlPlanes().find((n) => n.stage === "running" || n.stage === "rebooting");
  }
}
