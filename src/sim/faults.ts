/**
 * One fault schedule shared by the Kubernetes and Talos simulators. A fault is armed for a
 * point (an operation name such as `talos.Reboot` or `kube.evict`), optionally for one node or
 * object, and fires a bounded number of times. Simulators ask `take(point, target)` at each
 * point; what a fault does there is the simulator's business, keyed by `kind`.
 */
export const FAULT_KINDS = [
  /** The effect happens, but the response never reaches the client (the call hangs, then fails). */
  "lose-response",
  /** The request lands only after `delayMs`, after the client gave up. */
  "delay-landing",
  /** gRPC UNAVAILABLE / HTTP 503 before any effect. */
  "unavailable",
  /** gRPC DEADLINE_EXCEEDED before any effect. */
  "deadline-exceeded",
  /** HTTP 429 / 5xx storm for `count` calls. */
  "http-storm",
  /** An open watch is cut. */
  "watch-disconnect",
  /** Pods matched ignore SIGTERM and run their whole grace period. */
  "ignore-sigterm",
  /** The node does not come back from reboot. */
  "no-return-from-reboot",
  /** The node boots back into the old version after a completed install (loop-device pattern). */
  "boots-old-version",
  /** An install is still holding the lifecycle lock when the next request arrives. */
  "install-lock-held",
  /** The installer exits non-zero. */
  "install-fails",
  /** The install request is refused as invalid (INVALID_ARGUMENT) before anything is written. */
  "install-invalid",
  /** A service stays unhealthy for `durationMs` after boot. */
  "service-unhealthy",
  /**
   * At `talos.route`, target X, `params.by` Y: from the arm on, X's declared address answers
   * from machine Y (a DHCP lease or a static address handed to another machine).
   */
  "address-reused",
  /**
   * At `talos.machine`, target X: from the arm on, X's machine is a replacement installed with
   * the same hostname and address — a new SMBIOS UUID, machine-id and boot on both sides.
   */
  "machine-reimaged",
  /**
   * At `talos.config`, target X: the next configuration X activates without a reboot is stored and
   * active as a document, but its services keep their settings until the next boot (a setting
   * that needs a reboot to take effect).
   */
  "config-activation-deferred",
  /**
   * At `talos.staticPod`, target X (`params.component`, default kube-apiserver): the next
   * replacement of that static pod on X starts at the new version and never becomes ready.
   */
  "static-pod-not-ready",
  /**
   * At `kube.bootstrap`, target an object name (default coredns; `params.manager`, default
   * kustomize-controller): at the next static pod report, a GitOps controller starts applying
   * that bootstrap object's replicas and container images (sim/kube/bootstrap.ts).
   */
  "gitops-field-manager",
  /**
   * At `kube.daemonPod`, target a node (`params.daemonset`, default kube-proxy): the next pod a
   * rolling update makes for that DaemonSet on that node starts and never becomes ready
   * (sim/kube/daemonset_rollout.ts).
   */
  "daemon-pod-not-ready",
  /**
   * At `kube.job`, target the Job's `cairn.dev/hook` label (or its name): the next such Job runs
   * and fails (status `failed`, condition `Failed` BackoffLimitExceeded) instead of completing.
   */
  "job-fails",
  /** At `kube.job`: the next such Job starts and never finishes. */
  "job-hangs",
  /**
   * At a Talos read point (`talos.Version`, `talos.Read` (the boot id), `talos.ServiceList`,
   * `talos.cosi.Get`; `params.type` limits the last to one resource type), target a node: the
   * answer is the one that machine gave `params.lag` (default 1) reads of the same question
   * earlier, as a lagging apid proxy or cache would serve it; only every `params.every`-th read
   * (default 1) is served so. `count` answers that differ from the fresh one (sim/talos/stale_reads.ts).
   */
  "stale-read",
  /**
   * At a Talos server stream (`talos.LifecycleService.Upgrade`, `talos.Read`), target a node: the
   * stream skips every `params.every`-th message it writes (default 1: all of them), its end
   * unchanged; `count` streams.
   */
  "stream-skips-events",
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** One armed fault. */
export interface Fault {
  readonly kind: FaultKind;
  /** The operation point it fires at, e.g. `talos.Reboot`, `talos.LifecycleService.Upgrade`, `kube.evict`. */
  readonly point: string;
  /** Node or object name it is limited to; undefined = any. */
  readonly target?: string;
  /** How many times it fires (default 1). */
  readonly count?: number;
  /** Kind-specific parameters (delayMs, status, durationMs, ...). */
  readonly params?: Readonly<Record<string, number | string>>;
}

/** A record of a fault having fired, for assertions and reports. */
export interface FaultFiring {
  readonly kind: FaultKind;
  readonly point: string;
  readonly target: string | undefined;
  readonly atMs: number;
}

/** The mutable schedule. */
export class FaultSchedule {
  #armed: Array<{ fault: Fault; left: number }> = [];
  readonly #listeners: Array<() => void> = [];
  readonly fired: FaultFiring[] = [];

  constructor(faults: readonly Fault[] = []) {
    for (const f of faults) this.arm(f);
  }

  arm(fault: Fault): void {
    this.#armed.push({ fault, left: fault.count ?? 1 });
    for (const l of this.#listeners) l();
  }

  /**
   * Calls `listener` after every arm: for faults that change the world at once (a reused address,
   * a replaced machine) rather than at the next call through a point.
   */
  onArm(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Returns the first armed fault matching the point and target and consumes one firing. */
  take(point: string, target: string | undefined, nowMs: number): Fault | undefined {
    const entry = this.#armed.find((e) =>
      e.left > 0 && e.fault.point === point &&
      (e.fault.target === undefined || e.fault.target === target)
    );
    if (!entry) return undefined;
    entry.left--;
    this.fired.push({ kind: entry.fault.kind, point, target, atMs: nowMs });
    return entry.fault;
  }

  /** Like take, but does not consume (for faults that describe a standing condition). */
  peek(point: string, target: string | undefined): Fault | undefined {
    return this.#armed.find((e) =>
      e.left > 0 && e.fault.point === point &&
      (e.fault.target === undefined || e.fault.target === target)
    )?.fault;
  }

  /**
   * Like peek, for the given kinds only: a point may carry faults of several kinds (a stale read
   * and a refusal both at `talos.Version`), and each simulator step looks for its own.
   */
  peekKind(
    kinds: FaultKind | readonly FaultKind[],
    point: string,
    target: string | undefined,
  ): Fault | undefined {
    return this.#entry(kinds, point, target)?.fault;
  }

  /** Like take, for the given kinds only. */
  takeKind(
    kinds: FaultKind | readonly FaultKind[],
    point: string,
    target: string | undefined,
    nowMs: number,
  ): Fault | undefined {
    const entry = this.#entry(kinds, point, target);
    if (!entry) return undefined;
    entry.left--;
    this.fired.push({ kind: entry.fault.kind, point, target, atMs: nowMs });
    return entry.fault;
  }

  #entry(kinds: FaultKind | readonly FaultKind[], point: string, target: string | undefined) {
    const of = typeof kinds === "string" ? [kinds] : kinds;
    return this.#armed.find((e) =>
      e.left > 0 && of.includes(e.fault.kind) && e.fault.point === point &&
      (e.fault.target === undefined || e.fault.target === target)
    );
  }

  /** Armed faults that have not fired their full count. */
  remaining(): readonly Fault[] {
    return this.#armed.filter((e) => e.left > 0).map((e) => e.fault);
  }
}
