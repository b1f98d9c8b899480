/**
 * The numbered invariants of a simulation run (docs/dst.md), checked after every step: each
 * journal act a controller's call completed, each request a controller put on the wire (before
 * it goes, and after its answer), and the world's own state. The checker keeps a shadow of what
 * the journal durably holds (from the journal calls that returned) next to the ground truth the
 * twin knows (who cordoned a node, whether a request was answered, what a machine booted), so a
 * journal that records more than happened is caught, not trusted.
 */
import {
  accountsForAttempt,
  type Phase,
  type ResponseClass,
  TERMINAL_STATES,
} from "../../domain/operation.ts";
import type { OperationState } from "../../domain/operation.ts";
import type { AttemptRecord, OperationRecord } from "../../ports/journal.ts";
import { revisionCommit } from "../../domain/component/delivery.ts";
import type { ComponentOutcome } from "../../domain/component/outcome.ts";
import type { ComponentFacts } from "./component_kind.ts";

export const INVARIANTS = {
  1: "never two nodes disrupted at once",
  2: "never an uncordon of a cordon cairn does not own",
  3: "no attempt sent without a prior durable intent and attempt record",
  4: "no install twice before a reboot",
  5: "no progression past a failing or unreadable round",
  6: "completed only with every attempt answered and a fresh ordered observation of the target",
  7: "scope never released with an unaccounted attempt",
  8: "no send under a stale epoch or owner generation",
  9: "the report never claims more than the journal holds",
  10: "a control-plane component is never moved on two nodes at once (static pods; kube-proxy)",
  11: "no activating reboot before its staged configuration is observed stored",
  12: "a ComponentUpgrade completed only on its merge observed applied, Ready, then healthy",
  13: "a ComponentUpgrade's deadline is never recorded as completed or failed",
  14: "after a journal restore, the controller that ran before it sends nothing",
  15: "after a journal restore, no commitment or attempt under the approval from before it",
  16: "a configuration change never takes back one the same plan's accepted change made",
  17: "after a journal restore, every journal act of the controller that ran before it is refused",
  18: "no request leaves after the transport deadline its attempt recorded",
} as const;

export type InvariantId = keyof typeof INVARIANTS;

export interface Violation {
  readonly invariant: InvariantId;
  readonly detail: string;
  readonly atMs: number;
}

/** Thrown out of a step to end the run at its first violation. */
export class InvariantViolated extends Error {
  constructor(readonly violation: Violation) {
    super(
      `invariant ${violation.invariant} (${INVARIANTS[violation.invariant]}): ${violation.detail}`,
    );
  }
}

/** A request that changes the cluster, as a controller sends it. */
export interface Send {
  readonly controller: string;
  readonly api: "talos" | "kube";
  readonly method:
    | "pull"
    | "install"
    | "reboot"
    | "cordon"
    | "uncordon"
    | "evict"
    | "apply"
    | "set-image";
  /** The Kubernetes node (for an eviction: the node the pod runs on). */
  readonly node: string;
}

/** The phases whose attempt a send may belong to (a configuration change: ConfigApply's own, or
 * a KubernetesUpgrade's component change). */
const PHASE_OF: Record<Send["method"], readonly Phase[]> = {
  pull: ["pull"],
  install: ["install"],
  reboot: ["reboot"],
  cordon: ["cordon"],
  uncordon: ["uncordon"],
  evict: ["drain"],
  apply: ["config-apply", "component-config"],
  "set-image": ["kube-proxy-image"],
};

/** What the checker asks the world (the twin) about ground truth. */
export interface WorldView {
  now(): number;
  /** The node's `spec.unschedulable` as the API server holds it now. */
  unschedulable(node: string): boolean;
  /** The machine's stage (`running`, `rebooting`, `down`, `booting`). */
  stage(node: string): string;
  bootId(node: string): string;
  installsSinceBoot(node: string): number;
  /** Control-plane components on the node replaced since the start and not ready again. */
  componentsMoving(node: string): readonly string[];
  /** Whether the machine's stored (persistent) configuration changed since the start. */
  persistentChanged(node: string): boolean;
  /**
   * Nodes where kube-proxy's DaemonSet has no available pod now (none, terminating, or not ready):
   * a DaemonSet rollout moves it one node at a time (maxUnavailable 1).
   */
  kubeProxyUnavailable(): readonly string[];
}

interface AttemptShadow {
  readonly record: AttemptRecord;
  readonly controller: string;
  /** The owner generation and epoch the shadow held for the operation when it was admitted. */
  readonly freshAtAdmission: boolean;
  readonly step: number;
  /** Sends made under it, and how many the target answered. */
  sends: number;
  answered: number;
  unanswered: number;
  /** The response class the journal recorded, and when. */
  recorded?: ResponseClass;
  recordedStep?: number;
}

interface OpShadow {
  readonly id: string;
  readonly node: string;
  /** The plan step (a KubernetesUpgrade has one per component and node). */
  readonly step: string;
  /** A ConfigApply's stored document observed holding what was sent (a recorded fact). */
  storedObserved: boolean;
  gen: number;
  state: OperationState;
  readonly attempts: AttemptShadow[];
  /** Recovery-admin accounting decisions (attempt ids). */
  readonly accountedByAdmin: Set<string>;
}

interface ObservationShadow {
  readonly id: string;
  readonly operationId: string | undefined;
  readonly postcondition: string | undefined;
  readonly step: number;
  /** What was not true of the machine, by the kind's completion claim, when it was recorded. */
  readonly untrue: string | undefined;
}

export class InvariantChecker {
  #step = 0;
  epoch: string;
  readonly #ops = new Map<string, OpShadow>();
  /** Each node's last operation in `ops` (kept by `#setOp`, the only writer of `ops`). */
  readonly #lastOp = new Map<string, OpShadow>();
  /** Who made a node's current cordon: cairn (when it found the node schedulable) or someone else. */
  readonly #cordonOwner = new Map<string, "cairn" | "other">();
  /** Boot id of each node when cairn last sent it an install. */
  readonly #installBoot = new Map<string, string>();
  /** Per controller, the last health round it recorded: its purpose and whether it passed. */
  readonly #lastRound = new Map<string, { purpose: string; pass: boolean }>();
  readonly #observations = new Map<string, ObservationShadow>();
  /** Plan nodes in plan order. */
  readonly #planNodes: readonly string[];
  readonly #kind: string;
  readonly #untrue: (machine: string, step: string) => string | undefined;
  readonly #taken: ((machine: string, step: string) => string | undefined) | undefined;
  /** A ComponentUpgrade's world: its merge, its git, the delivery as the world holds it. */
  readonly #component: ComponentFacts | undefined;
  /** Per controller and read, whether its last answer was a stale one (an older answer again). */
  readonly #staleAnswer = new Map<string, boolean>();
  /** Invariants switched off (never in a campaign; the vacuity tests check one at a time). */
  readonly violations: Violation[] = [];
  /** The controllers running when the journal was restored (they must send nothing after it). */
  #preRestore: ReadonlySet<string> | undefined;

  constructor(
    readonly world: WorldView,
    o: {
      readonly epoch: string;
      readonly planNodes: readonly string[];
      /** The plan's kind (invariant 11 concerns a ConfigApply's reboot). */
      readonly kind: string;
      /**
       * The kind's completion claim on ground truth: undefined when a completed operation of
       * `step` on `machine` would be true of it now, else what is not (invariant 6).
       */
      readonly untrue: (machine: string, step: string) => string | undefined;
      /**
       * For kinds that change a machine's configuration in place: undefined while the change an
       * accepted configuration attempt of `step` made is still in `machine`'s stored document,
       * else what took it back (invariant 16).
       */
      readonly taken?: (machine: string, step: string) => string | undefined;
      /** A ComponentUpgrade's world (invariants 12 and 13). */
      readonly component?: ComponentFacts;
    },
  ) {
    this.epoch = o.epoch;
    this.#planNodes = o.planNodes;
    this.#kind = o.kind;
    this.#untrue = o.untrue;
    this.#taken = o.taken;
    this.#component = o.component;
  }

  #fail(invariant: InvariantId, detail: string): never {
    const v = { invariant, detail, atMs: this.world.now() };
    this.violations.push(v);
    throw new InvariantViolated(v);
  }

  /** The operations' shadows, by id, in the order the checker first heard of each. */
  get ops(): ReadonlyMap<string, OpShadow> {
    return this.#ops;
  }

  /** The node's last operation in `ops` order (the invariants ask per node, per request). */
  #opOfNode(node: string): OpShadow | undefined {
    return this.#lastOp.get(node);
  }

  /**
   * Records an operation's shadow, keeping `#lastOp` what a scan of `ops` would find: a new id
   * goes last (a Map keeps insertion order), so it is its node's last; a known id keeps its place,
   * so it is its node's last only if the shadow it replaces was.
   */
  #setOp(op: OpShadow): void {
    const had = this.ops.get(op.id);
    this.#ops.set(op.id, op);
    if (had && had.node !== op.node) {
      // An operation does not move between machines; if one ever did, scan as before.
      this.#lastOp.clear();
      for (const o of this.ops.values()) this.#lastOp.set(o.node, o);
    } else if (!had || this.#lastOp.get(op.node) === had) this.#lastOp.set(op.node, op);
  }

  /** A node cairn holds disrupted: its own cordon in place, or down from cairn's reboot. */
  #disrupted(node: string): string | undefined {
    if (this.world.unschedulable(node) && this.#cordonOwner.get(node) === "cairn") {
      return "cordoned by cairn";
    }
    const stage = this.world.stage(node);
    const op = this.#opOfNode(node);
    if (
      stage !== "running" &&
      op?.attempts.some((a) => a.record.phase === "reboot" || a.record.phase === "install")
    ) {
      return `machine ${stage}`;
    }
    return undefined;
  }

  // ---- steps ------------------------------------------------------------------------------

  /** Before a controller's request leaves: invariants 14, 1, 2, 3, 4, 8. */
  /** `controllerNowMs`: the sending controller's own clock (its attempts' deadlines are on it). */
  beforeSend(s: Send, controllerNowMs: number): void {
    this.#step++;
    if (this.#preRestore?.has(s.controller)) {
      this.#fail(
        14,
        `${s.controller}, running since before the journal restore, sends ${s.method} to ${s.node}`,
      );
    }
    const phase = PHASE_OF[s.method];
    if (s.method !== "uncordon") {
      for (const other of this.#planNodesAndAll()) {
        if (other === s.node) continue;
        const why = this.#disrupted(other);
        if (why) {
          this.#fail(1, `${s.controller} sends ${s.method} to ${s.node} while ${other} is ${why}`);
        }
      }
    }
    if (s.method === "uncordon" && this.#cordonOwner.get(s.node) !== "cairn") {
      this.#fail(2, `${s.controller} uncordons ${s.node}, whose cordon cairn did not make`);
    }
    if (s.method === "install") {
      const boot = this.world.bootId(s.node);
      if (this.#installBoot.get(s.node) === boot) {
        this.#fail(
          4,
          `${s.controller} sends a second install to ${s.node} before it rebooted (boot ${boot})`,
        );
      }
      this.#installBoot.set(s.node, boot);
    }
    const op = this.#opOfNode(s.node);
    if (s.method === "apply" && op) this.#oneComponentAtATime(s, op);
    if (s.method === "reboot" && this.#kind === "ConfigApply" && op) {
      this.#storedBeforeReboot(s, op);
    }
    const open = op?.attempts.filter((a) =>
      phase.includes(a.record.phase) && a.controller === s.controller && a.recorded === undefined
    ).at(-1);
    if (!op || !open) {
      this.#fail(
        3,
        `${s.controller} sends ${s.method} to ${s.node} with no open ${
          phase.join("/")
        } attempt recorded`,
      );
    }
    // Only a drain sends many requests (one eviction per pod) under one attempt.
    if (open.sends > 0 && !phase.includes("drain")) {
      this.#fail(
        3,
        `${s.controller} sends ${s.method} to ${s.node} again under attempt ${open.record.id}`,
      );
    }
    // The attempt must have been admitted under the token the journal held then, and that token
    // must still be current when each request leaves (a takeover or a new epoch fences it).
    if (
      !open.freshAtAdmission || open.record.ownerGen !== op.gen ||
      open.record.ownerEpoch !== this.epoch
    ) {
      this.#fail(
        8,
        `${s.controller} sends ${s.method} to ${s.node} under attempt ${open.record.id} of generation ` +
          `${open.record.ownerGen} epoch ${open.record.ownerEpoch} (current: ${op.gen}, ${this.epoch})`,
      );
    }
    // A request leaves only before the transport deadline its attempt recorded, on the sending
    // controller's own clock: recovery's settle floor counts from that deadline, so a controller
    // paused between the attempt's commit and its send must not send once past it.
    if (controllerNowMs >= open.record.transportDeadlineMs) {
      this.#fail(
        18,
        `${s.controller} sends ${s.method} to ${s.node} under attempt ${open.record.id} ` +
          `${controllerNowMs - open.record.transportDeadlineMs} ms after its transport deadline`,
      );
    }
    if (s.method === "cordon") {
      this.#cordonOwner.set(s.node, this.world.unschedulable(s.node) ? "other" : "cairn");
    }
    open.sends++;
  }

  /** After the request's answer (or its absence). */
  afterSend(s: Send, answered: boolean): void {
    this.#step++;
    const op = this.#opOfNode(s.node);
    const open = op?.attempts.filter((a) =>
      PHASE_OF[s.method].includes(a.record.phase) && a.controller === s.controller &&
      a.recorded === undefined
    ).at(-1);
    if (open) answered ? open.answered++ : open.unanswered++;
    if (s.method === "uncordon" && answered && !this.world.unschedulable(s.node)) {
      this.#cordonOwner.delete(s.node);
    }
    this.checkWorld();
  }

  /**
   * 10: a component change is sent only while that component runs ready on every other node
   * (a KubernetesUpgrade moves one control-plane component on one node at a time).
   */
  #oneComponentAtATime(s: Send, op: OpShadow): void {
    const component = op.step.split("/k8s/")[1];
    if (!component) return;
    for (const other of this.#planNodes) {
      if (other !== s.node && this.world.componentsMoving(other).includes(component)) {
        this.#fail(
          10,
          `${s.controller} changes ${component} on ${s.node} while it is not ready again on ${other}`,
        );
      }
    }
  }

  /**
   * 11: a ConfigApply's activating reboot only after its staged apply landed on the machine and
   * the executor recorded the stored document observed holding what it sent.
   */
  #storedBeforeReboot(s: Send, op: OpShadow): void {
    if (!this.world.persistentChanged(s.node) || !op.storedObserved) {
      this.#fail(
        11,
        `${s.controller} reboots ${s.node} with its staged configuration ${
          this.world.persistentChanged(s.node) ? "stored but never observed" : "not stored"
        }`,
      );
    }
  }

  /**
   * The plan node whose operation holds `controller`'s open attempt of `phase` (a change that
   * names no node, kube-proxy's DaemonSet image, is sent under it); `?` when none does.
   */
  nodeOfOpenAttempt(controller: string, phase: Phase): string {
    for (const op of this.ops.values()) {
      if (
        op.attempts.some((a) =>
          a.record.phase === phase && a.controller === controller && a.recorded === undefined
        )
      ) return op.node;
    }
    return "?";
  }

  /**
   * The journal's contents were replaced with an older backup (a recovery entry follows at
   * once): `controllers` ran before it. What they did since the backup is lost to the journal,
   * never to the world: the shadow keeps it (ground truth for 1, 2, 4, 7).
   */
  restored(controllers: readonly string[]): void {
    this.#step++;
    this.#preRestore = new Set(controllers);
  }

  /** Whether the journal was restored in this run. */
  restoredAny(): boolean {
    return this.#preRestore !== undefined;
  }

  /** Whether `controller` ran before the journal restore (its claims predate the restore). */
  ranBeforeRestore(controller: string): boolean {
    return this.#preRestore?.has(controller) ?? false;
  }

  /**
   * 15: the plan was approved before the restore, so its approval's epoch is stale after the
   * recovery entry: a restored operation never retries, and no new one starts (the campaign never
   * approves again). Whatever the restored journal lost (an install, a cordon), nothing is sent
   * again on its word.
   */
  #notAfterRestore(controller: string, what: string): void {
    if (this.#preRestore) {
      this.#fail(15, `${controller} ${what} after the journal restore, under the old approval`);
    }
  }

  /**
   * 17: a journal act of `controller` returned done although the controller ran before the
   * restore and made the act after it (so the act was queued behind the recovery entry, in the
   * new epoch). Acts without an owner token (observations, health rounds, dispatch checks) carry
   * the epoch the controller started in; the journal must refuse them all.
   */
  fencedActRecorded(controller: string, act: string): void {
    this.#step++;
    this.#fail(17, `${controller}, fenced by the journal restore, recorded ${act} after it`);
  }

  /** Someone other than cairn cordoned `node`. */
  operatorCordoned(node: string): void {
    this.#cordonOwner.set(node, "other");
  }

  #planNodesAndAll(): readonly string[] {
    return this.#planNodes;
  }

  /** The world's own state after any step: 1 and 4 on ground truth. */
  checkWorld(): void {
    const disrupted = this.#planNodes.filter((n) => this.#disrupted(n) !== undefined);
    if (disrupted.length > 1) this.#fail(1, `nodes disrupted at once: ${disrupted.join(", ")}`);
    for (const n of this.#planNodes) {
      if (this.world.installsSinceBoot(n) > 1) {
        this.#fail(4, `${n} holds ${this.world.installsSinceBoot(n)} installs since its last boot`);
      }
    }
    const moving = new Map<string, string[]>();
    for (const n of this.#planNodes) {
      for (const c of this.world.componentsMoving(n)) moving.set(c, [...moving.get(c) ?? [], n]);
    }
    for (const [c, nodes] of moving) {
      if (nodes.length > 1) this.#fail(10, `${c} moving on ${nodes.join(", ")} at once`);
    }
    this.checkKubeProxy();
    this.#checkChangesKept();
  }

  /**
   * 16: each change an accepted configuration attempt made stays in the machine's document. A
   * whole-document apply based on a read from before an earlier change (a lagging proxy) would put
   * the earlier component back; no drawn fault changes a machine's configuration behind cairn.
   */
  #checkChangesKept(): void {
    if (!this.#taken) return;
    for (const op of this.#ops.values()) {
      const accepted = op.attempts.some((a) =>
        a.record.phase === "component-config" && a.recorded === "accepted"
      );
      if (!accepted) continue;
      const taken = this.#taken(op.node, op.step);
      if (taken !== undefined) {
        this.#fail(16, `${op.step}'s accepted change was taken back: ${taken}`);
      }
    }
  }

  /**
   * 10 for kube-proxy, which moves by its DaemonSet's own rollout: cairn changes the image once and
   * the controller replaces one node's pod at a time, so it is never down on two nodes at once.
   * The rollout runs between cairn's steps: the runner also calls this at every pod change.
   */
  checkKubeProxy(): void {
    const down = this.world.kubeProxyUnavailable();
    if (down.length > 1) this.#fail(10, `kube-proxy unavailable on ${down.join(", ")} at once`);
  }

  // ---- journal acts -----------------------------------------------------------------------

  committed(controller: string, op: OperationRecord): void {
    this.#step++;
    this.#notAfterRestore(controller, `commits ${op.machine}`);
    const index = this.#planNodes.indexOf(op.machine);
    for (const earlier of this.#planNodes.slice(0, Math.max(0, index))) {
      const e = this.#opOfNode(earlier);
      if (e?.state !== "completed") {
        this.#fail(
          5,
          `${controller} committed ${op.machine} while ${earlier} is ${e?.state ?? "not started"}`,
        );
      }
    }
    const round = this.#lastRound.get(controller);
    if (!round || round.purpose !== "gate" || !round.pass) {
      this.#fail(
        5,
        `${controller} committed ${op.machine} after ${
          round ? `a ${round.purpose} round that did not pass` : "no gate round"
        }`,
      );
    }
    this.#setOp({
      id: op.id,
      node: op.machine,
      step: op.step,
      storedObserved: false,
      gen: op.ownerGen,
      state: op.state,
      attempts: [],
      accountedByAdmin: new Set(),
    });
  }

  attemptAdmitted(controller: string, a: AttemptRecord): void {
    this.#step++;
    this.#notAfterRestore(controller, `is admitted attempt ${a.id} (${a.phase})`);
    const op = this.ops.get(a.operationId);
    if (!op) return;
    op.attempts.push({
      record: a,
      controller,
      freshAtAdmission: a.ownerGen === op.gen && a.ownerEpoch === this.epoch,
      step: this.#step,
      sends: 0,
      answered: 0,
      unanswered: 0,
    });
    op.state = "sending";
  }

  responseRecorded(attemptId: string, cls: ResponseClass, after: OperationRecord): void {
    this.#step++;
    const op = this.ops.get(after.id);
    const a = op?.attempts.find((x) => x.record.id === attemptId);
    if (a) {
      a.recorded = cls;
      a.recordedStep = this.#step;
    }
    if (op) this.#moved(op, after);
  }

  observationRecorded(
    o: { id: string; operationId?: string; postcondition?: string; machine: string },
  ): void {
    this.#step++;
    const op = o.operationId ? this.ops.get(o.operationId) : undefined;
    this.#observations.set(o.id, {
      id: o.id,
      operationId: o.operationId,
      postcondition: o.postcondition,
      step: this.#step,
      untrue: op ? this.#untrue(o.machine, op.step) : "no operation of this plan",
    });
  }

  /** A phase record of an operation (intent or fact) the journal holds. */
  phaseRecorded(
    operationId: string,
    phase: string,
    kind: string,
    detail: Readonly<Record<string, unknown>>,
  ): void {
    this.#step++;
    const op = this.ops.get(operationId);
    if (
      op && phase === "config-apply" && kind === "fact" && detail["persistentHoldsSent"] === true
    ) {
      op.storedObserved = true;
    }
  }

  healthRound(controller: string, purpose: string, pass: boolean): void {
    this.#step++;
    this.#lastRound.set(controller, { purpose, pass });
  }

  /** An operation's recorded state or owner moved (transition, takeover, classification). */
  moved(after: OperationRecord, observationId?: string): void {
    this.#step++;
    let op = this.ops.get(after.id);
    if (!op) {
      // Committed by a controller that died before the checker heard of it: a successor's
      // takeover (and resume) is the first the checker sees of it.
      op = {
        id: after.id,
        node: after.machine,
        step: after.step,
        storedObserved: false,
        gen: after.ownerGen,
        state: after.state,
        attempts: [],
        accountedByAdmin: new Set(),
      };
      this.#setOp(op);
    }
    this.#moved(op, after, observationId);
  }

  /**
   * A resume recorded readings of earlier attempts (docs/recovery.md#resume-after-a-takeover): each
   * counts as its attempt's answer for 7 only on the same ground truth as a response (every request
   * the attempt sent was answered).
   */
  resumeRead(
    operationId: string,
    readings: ReadonlyArray<{ readonly attemptId: string; readonly outcome: ResponseClass }>,
  ): void {
    this.#step++;
    const op = this.ops.get(operationId);
    for (const r of readings) {
      const a = op?.attempts.find((x) => x.record.id === r.attemptId);
      if (a) {
        a.recorded = r.outcome;
        a.recordedStep = this.#step;
      }
    }
  }

  adminAccounted(operationId: string, attemptId: string): void {
    this.ops.get(operationId)?.accountedByAdmin.add(attemptId);
  }

  #moved(op: OpShadow, after: OperationRecord, observationId?: string): void {
    const was = op.state;
    op.gen = after.ownerGen;
    op.state = after.state;
    if (was === after.state || !TERMINAL_STATES.includes(after.state)) return;
    // 7: a terminal state releases the scope; every attempt must be accounted by a response the
    // target really gave (or a recovery-admin decision).
    for (const a of op.attempts) {
      const accounted = op.accountedByAdmin.has(a.record.id) ||
        (a.recorded !== undefined && accountsForAttempt(a.recorded) && a.unanswered === 0 &&
          (a.answered > 0 || a.sends === 0));
      if (!accounted) {
        this.#fail(
          7,
          `${op.node}'s operation became ${after.state} with attempt ${a.record.id} (${a.record.phase}) ` +
            `recorded ${
              a.recorded ?? "without a response"
            } after ${a.answered}/${a.sends} answered sends`,
        );
      }
    }
    if (after.state !== "completed") return;
    // 6: completed needs a completion observation, established, recorded after the last
    // accounting, and true of the machine when it was recorded.
    const obs = observationId ? this.#observations.get(observationId) : undefined;
    const last = Math.max(0, ...op.attempts.map((a) => a.recordedStep ?? 0));
    if (!obs || obs.postcondition !== "established") {
      this.#fail(
        6,
        `${op.node} completed on ${observationId ?? "no observation"} (${
          obs?.postcondition ?? "unknown"
        })`,
      );
    }
    if (obs.step < last) {
      this.#fail(6, `${op.node} completed on an observation older than its last accounting`);
    }
    if (obs.untrue !== undefined) {
      this.#fail(6, `${op.node} completed while, when observed, ${obs.untrue}`);
    }
    if (op.attempts.length === 0) this.#fail(6, `${op.node} completed with no attempt recorded`);
  }

  /** 9: what the executor's outcome and the report say, against the journal's own states. */
  checkClaims(
    claims: ReadonlyArray<{ readonly by: string; readonly node: string; readonly state: string }>,
    journalState: (node: string) => OperationState | undefined,
  ): void {
    for (const c of claims) {
      if (c.state === "completed" && journalState(c.node) !== "completed") {
        this.#fail(
          9,
          `${c.by} says ${c.node} completed; the journal holds ${
            journalState(c.node) ?? "no operation"
          }`,
        );
      }
    }
  }

  /** A read a controller made was answered, from the world or (`stale`) with an older answer. */
  readAnswered(controller: string, key: string, stale: boolean): void {
    this.#staleAnswer.set(`${controller} ${key}`, stale);
  }

  /**
   * A controller journaled a ComponentUpgrade's end (`component-end`): 12 for `completed`, 13 for
   * every other end.
   */
  componentEnded(controller: string, o: ComponentOutcome): void {
    this.#step++;
    const f = this.#component;
    if (!f) return;
    if (o.end === "completed") {
      const why = this.#completionUnbacked(controller, o, f);
      if (why) this.#fail(12, `${controller} recorded the ComponentUpgrade completed: ${why}`);
      return;
    }
    if (o.end !== "health-failed") return;
    // 13: a failure is a failing after-merge round read after the landing, not a deadline
    // reached with the delivery unseen or the rounds unreadable (a timeout decides nothing).
    const d = o.delivery;
    const last = o.rounds.at(-1)?.outcome;
    const round = this.#lastRound.get(controller);
    if (d?.state !== "landed" || d.landedAtMs === undefined) {
      this.#fail(
        13,
        `${controller} recorded health-failed with its delivery ${d?.state ?? "unseen"}`,
      );
    }
    if (last?.verdict !== "fail" || last.window.startedAtMs < d.landedAtMs) {
      this.#fail(
        13,
        `${controller} recorded health-failed on ${
          last ? `a ${last.verdict} round` : "no after-merge round"
        }${last && last.window.startedAtMs < d.landedAtMs ? " from before the landing" : ""}`,
      );
    }
    if (!round || round.purpose !== "verify" || round.pass) {
      this.#fail(
        13,
        `${controller} recorded health-failed; its last journaled round was not a failing one`,
      );
    }
  }

  /** 12: why a recorded completion is not backed by what was observed and what the world holds. */
  #completionUnbacked(
    controller: string,
    o: ComponentOutcome,
    f: ComponentFacts,
  ): string | undefined {
    const d = o.delivery;
    if (d?.state !== "landed" || d.landedAtMs === undefined) {
      return `its delivery was ${d?.state ?? "never observed"}`;
    }
    const bare = (v: string | undefined) => v?.replace(/^v/, "");
    const tied = (commit: string | undefined) =>
      commit !== undefined && (commit === f.merge || f.contains(commit, f.merge) === true);
    const a = d.last.applied;
    if (!a?.found || a.ready?.status !== "True") {
      return `the Kustomization was observed ${a?.found ? "not Ready" : "missing"}`;
    }
    if (a.generation !== undefined && a.observedGeneration !== a.generation) {
      return `the Kustomization's status was for generation ${a.observedGeneration}, not ${a.generation}`;
    }
    if (!tied(revisionCommit(a.appliedRevision))) {
      return `the Kustomization was observed applying ${a.appliedRevision}, which does not contain the merge`;
    }
    const r = d.last.release;
    if (
      r?.ready?.status !== "True" || bare(r.chartVersion) !== f.to || r.releaseStatus !== "deployed"
    ) {
      return `the release was observed at chart ${r?.chartVersion} (${r?.releaseStatus}), Ready ${r?.ready?.status}`;
    }
    const last = o.rounds.at(-1)?.outcome;
    if (last?.verdict !== "pass" || last.window.startedAtMs < d.landedAtMs) {
      return `no after-merge round passed after the landing (${last?.verdict ?? "none"})`;
    }
    const round = this.#lastRound.get(controller);
    if (!round || round.purpose !== "verify" || !round.pass) {
      return "its last journaled round is not a passing after-merge round";
    }
    if (d.last.atMs < last.window.startedAtMs) {
      return "the delivery was not read again after the passing round";
    }
    // What the world holds now, unless the controller's last reads of the Kustomization or the
    // release were stale answers it could not tell from fresh ones (its judgement is held above).
    const stale = [
      `obj/kustomizations/${a.namespace}/${a.name}`,
      `obj/helmreleases/${r.namespace}/${r.name}`,
    ].some((k) => this.#staleAnswer.get(`${controller} ${k}`) === true);
    if (stale) return undefined;
    const t = f.truth();
    if (!t.ready || !t.current || !tied(t.applied)) {
      return `the world's Kustomization applied ${t.applied ?? "nothing"} (Ready ${t.ready}, ` +
        `current ${t.current}): the delivery went back`;
    }
    if (bare(t.chart) !== f.to || t.chartStatus !== "deployed") {
      return `the world's release runs chart ${t.chart} (${t.chartStatus})`;
    }
    return undefined;
  }

  /** Fails 9 with `detail` (a claim the caller found unbacked). */
  unbackedClaim(detail: string): never {
    this.#fail(9, detail);
  }
}
