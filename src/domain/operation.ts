/**
 * The ER operation model as data: states, the only legal transitions, response classes and the
 * phases of a node step. Pure; the journal enforces these rules inside its transactions.
 */

/** Every operation state (docs/operation-model.md#operation-states). */
export const OPERATION_STATES = [
  "committed",
  "sending",
  "verifying",
  "completed",
  "rejected",
  "failed",
  "cancelled",
  "unresolved",
] as const;

/** One operation state. */
export type OperationState = (typeof OPERATION_STATES)[number];

/** States that end an operation and release its machine scope and rollout slot. */
export const TERMINAL_STATES: readonly OperationState[] = [
  "completed",
  "rejected",
  "failed",
  "cancelled",
];

/** States that hold the machine scope and the rollout slot. */
export const HOLDING_STATES: readonly OperationState[] = [
  "committed",
  "sending",
  "verifying",
  "unresolved",
];

/**
 * The in-flight states: the operation is between its commitment and a settled state. A takeover
 * moves them to `unresolved` (an `unresolved` operation keeps its state); reports and status show
 * them as running, and a move between them is not a report milestone.
 */
export const IN_FLIGHT_STATES: readonly OperationState[] = ["committed", "sending", "verifying"];

/** A state or `null` for "no operation yet". */
export type FromState = OperationState | null;

/**
 * ER's transition table; "no other transition is valid". `null` is the absent operation.
 * Self-loops are not transitions: a takeover of an `unresolved` operation changes its owner only.
 */
export const TRANSITIONS: ReadonlyArray<readonly [FromState, OperationState]> = [
  [null, "committed"],
  [null, "completed"], // adopt only
  ["committed", "sending"],
  ["committed", "unresolved"],
  ["sending", "verifying"],
  ["sending", "rejected"],
  ["sending", "unresolved"],
  ["verifying", "completed"],
  ["verifying", "failed"],
  ["verifying", "unresolved"],
  ["unresolved", "completed"],
  ["unresolved", "failed"],
  ["unresolved", "rejected"],
  ["unresolved", "sending"],
  ["unresolved", "cancelled"],
];

/**
 * True when ER allows moving from `from` to `to`.
 *
 * @example
 * ```ts
 * import { canTransition } from "./operation.ts";
 * canTransition("committed", "sending"); // true
 * canTransition("committed", "cancelled"); // false: committed goes through unresolved first
 * ```
 */
export function canTransition(from: FromState, to: OperationState): boolean {
  return TRANSITIONS.some(([f, t]) => f === from && t === to);
}

/**
 * True for the four terminal states.
 *
 * @example
 * ```ts
 * import { isTerminal } from "./operation.ts";
 * isTerminal("unresolved"); // false
 * ```
 */
export function isTerminal(state: OperationState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** True for `committed`, `sending` and `verifying` (see {@link IN_FLIGHT_STATES}). */
export function isInFlight(state: OperationState): boolean {
  return IN_FLIGHT_STATES.includes(state);
}

/** True while the operation holds its machine scope and rollout slot. */
export function holdsScope(state: OperationState): boolean {
  return HOLDING_STATES.includes(state);
}

/** True for a valid state name. */
export function isOperationState(s: string): s is OperationState {
  return (OPERATION_STATES as readonly string[]).includes(s);
}

/**
 * How a request ended. Only the first three come from the target and account for an attempt;
 * transport outcomes never do (a late landing is still possible).
 */
export const RESPONSE_CLASSES = [
  /** The target accepted the request. */
  "accepted",
  /** A definitive validation rejection (ER: InvalidArgument of the validation-error class), the only class proven to precede any mutation. */
  "rejected-pre-mutation",
  /** Any other code the target itself returned: accounts for the attempt, proves nothing else. */
  "target-error",
  /** Dial failure, reset or timeout: the request may still land. */
  "transport-failure",
  /** The executor never saw a response. */
  "lost",
  /**
   * Recorded by a resume after a takeover, never by a send: a Kubernetes write whose effect a
   * fresh read shows in place, and which can no longer land differently (a cordon whose
   * resourceVersion precondition the node has moved past, owned by cairn's field manager; a drain
   * whose planned pods are gone). The API server's state is its answer (docs/recovery.md#resume-after-a-takeover).
   */
  "observed-in-effect",
  /**
   * Recorded by a resume: the write's effect is absent and the write can no longer land (its
   * resourceVersion precondition is gone); the phase runs again under a new attempt.
   */
  "observed-absent",
  /**
   * Recorded by a resume for a drain only: some planned pods are still on the node. The drain
   * runs again under a new attempt; an eviction of the earlier attempt landing late is one the
   * new drain asks for too, admitted by the same disruption budget.
   */
  "observed-incomplete",
] as const;

/** One response class. */
export type ResponseClass = (typeof RESPONSE_CLASSES)[number];

/**
 * True when the response came from the target and so accounts for its attempt.
 *
 * @example
 * ```ts
 * import { accountsForAttempt } from "./operation.ts";
 * accountsForAttempt("transport-failure"); // false
 * ```
 */
export function accountsForAttempt(c: ResponseClass): boolean {
  return c === "accepted" || c === "rejected-pre-mutation" || c === "target-error" ||
    isObservedClass(c);
}

/** The classes a resume records from a fresh reading (never a send's own response). */
export const OBSERVED_CLASSES = [
  "observed-in-effect",
  "observed-absent",
  "observed-incomplete",
] as const satisfies readonly ResponseClass[];

/** True for a class a resume recorded from a reading. */
export function isObservedClass(c: ResponseClass | string | null): boolean {
  return (OBSERVED_CLASSES as readonly (string | null)[]).includes(c);
}

/**
 * The phases whose unaccounted attempt a resume may classify from a fresh reading: Kubernetes
 * writes the API server decides (a cordon under a resourceVersion precondition, the Eviction API).
 * Every Talos call (pull, install, reboot) is left `unresolved`: a late landing cannot be read
 * back, and an install is never sent twice.
 */
export const OBSERVABLE_PHASES = ["cordon", "drain"] as const satisfies readonly Phase[];

/**
 * What a completion read established about the step's bound postconditions, recorded with the
 * observation as a typed fact (never inferred later from its digest or its text):
 * - `established`: every bound postcondition was read and equals its bound value;
 * - `contradicted`: at least one bound postcondition was read and differs from its bound value;
 * - `unreadable`: nothing that was read differs, but at least one could not be read.
 * Only `established` can complete an operation and only `contradicted` can fail it: absence of
 * evidence classifies nothing, so an unreadable completion read leaves the operation `unresolved`.
 */
export type PostconditionReading = "established" | "contradicted" | "unreadable";

/** Every postcondition reading. */
export const POSTCONDITION_READINGS: readonly PostconditionReading[] = [
  "established",
  "contradicted",
  "unreadable",
];

/**
 * The phases of a node step (docs/operation-model.md#the-node-step); phase facts sit beneath an
 * operation, not as states.
 */
export const PHASES = [
  "gate",
  "pre-hook",
  "pull",
  "install",
  "cordon",
  "drain",
  "reboot",
  "boot-observed",
  "verify",
  "uncordon",
  "post-gate",
  /** Node hooks' Jobs before and after a node step (docs/operating.md#node-hooks). */
  "post-hook",
  /** A ConfigApply's ApplyConfiguration (docs/config-apply.md#mode-and-class). */
  "config-apply",
  /** A KubernetesUpgrade's configuration change naming a component's new image. */
  "component-config",
  /** A KubernetesUpgrade's component observed at its new version (static pod, kubelet). */
  "component-observed",
  /** A KubernetesUpgrade's change of kube-proxy's DaemonSet image (its rollout is observed). */
  "kube-proxy-image",
] as const;

/**
 * How the rollout of a plan ended: every node `completed`; `halted` at a node that did not
 * complete (its operation says why); `refused` before a commitment because a check re-run at
 * dispatch found contrary evidence (nothing was sent); or `stopped` between node steps by a stop
 * signal, to be resumed (never rerun) by the next start.
 */
export const ROLLOUT_ENDS = ["completed", "halted", "refused", "stopped"] as const;

/** One way a rollout ended. */
export type RolloutEnd = (typeof ROLLOUT_ENDS)[number];

/** One phase name. */
export type Phase = (typeof PHASES)[number];

/**
 * The comparisons of the commitment (0–6) and attempt (1–3, 6–9) transactions
 * (docs/operation-model.md#comparisons).
 */
export type Comparison = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;

/** Why a commitment or attempt transaction was refused, with the comparison that failed. */
export const REFUSAL_CAUSES = {
  "operation-exists": 0,
  "plan-unknown": 1,
  "plan-not-approved": 1,
  "plan-expired": 1,
  "approval-epoch-stale": 1,
  "binding-changed": 2,
  "evidence-missing": 3,
  "evidence-stale": 3,
  "evidence-digest-mismatch": 3,
  "evidence-contradicted": 3,
  "scope-held": 4,
  // An owed post hook of the machine's last step holds its scope (docs/operating.md#node-hooks).
  "hook-owed": 4,
  "slot-held": 5,
  "gate-frozen": 6,
  "gate-recovery": 6,
  "fence-mismatch": 7,
  "epoch-superseded": 7,
  "state-not-attemptable": 7,
  "reclassified": 8,
  "attempts-exhausted": 9,
} as const satisfies Record<string, Comparison>;

/** One refusal cause. */
export type RefusalCause = keyof typeof REFUSAL_CAUSES;

/**
 * True when an attempt refusal by this comparison moves a `committed` operation to `unresolved`
 * (ER: comparisons 1, 2, 3 or 6).
 */
export function refusalUnsettlesCommitted(cause: RefusalCause): boolean {
  const n = REFUSAL_CAUSES[cause];
  return n === 1 || n === 2 || n === 3 || n === 6;
}

/**
 * The grounds on which a no-attempt `unresolved` operation may become `cancelled`
 * (docs/operation-model.md#no-attempt-cancellation).
 */
export type CancelGround =
  | "plan-revoked"
  | "plan-cancelled"
  | "plan-expired"
  | "approval-epoch-stale"
  | "recovery-admin";

/**
 * The smallest settle floor a deployment may configure
 * (docs/operation-model.md#accounting-and-the-settle-floor).
 */
export const MIN_SETTLE_FLOOR_MS = 30_000;

/** Base32 alphabet of identifiers (RFC 4648, lower case, no padding). */
const B32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * Encodes 16 random bytes as `<prefix>_<26 base32 chars>` (128 bits).
 *
 * @example
 * ```ts
 * import { encodeId } from "./operation.ts";
 * encodeId("ep", new Uint8Array(16)); // "ep_aaaaaaaaaaaaaaaaaaaaaaaaaa"
 * ```
 */
export function encodeId(prefix: string, bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError("an identifier needs exactly 16 bytes");
  let bits = 0;
  let acc = 0;
  let out = "";
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(acc << (5 - bits)) & 31];
  return `${prefix}_${out}`;
}

/**
 * The node hooks' Job creates (docs/operating.md#node-hooks): attempts of the step's operation,
 * fenced and accounted like any other, but requests to the Kubernetes API for an object beside
 * the step, never requests to the machine the operation holds.
 */
export const HOOK_PHASES = ["pre-hook", "post-hook"] as const satisfies readonly Phase[];

/** True for a node hook's Job create. */
export function isHookPhase(phase: string): boolean {
  return (HOOK_PHASES as readonly string[]).includes(phase);
}

/**
 * Whether an operation's attempts prove it `rejected` (docs/operation-model.md#operation-states):
 * every request to the machine has a definitive rejection of the class proven to precede any
 * mutation, and there is at least one. A node hook's Job create is not a request to the machine:
 * its answer (the Job created, or the API server's refusal) accounts for it and says nothing about
 * whether the machine changed, so it needs that answer and nothing more. An accepted hook beside
 * a refused machine request therefore leaves the operation `rejected` (the machine never changed);
 * an unanswered one leaves it `unresolved`.
 */
export function rejectionProven(
  attempts: ReadonlyArray<{ readonly phase: string; readonly responseClass: string | null }>,
): boolean {
  const machine = attempts.filter((a) => !isHookPhase(a.phase));
  return machine.length > 0 &&
    machine.every((a) => a.responseClass === "rejected-pre-mutation") &&
    attempts.filter((a) => isHookPhase(a.phase)).every((a) =>
      a.responseClass !== null && accountsForAttempt(a.responseClass as ResponseClass)
    );
}

/**
 * The reason a controller records when an operator's stop (SIGINT/SIGTERM) leaves a committed step
 * in flight: the operation becomes `unresolved` without any classification (a stop is not
 * evidence), so, like a takeover of work in flight, it may be resumed from the journal by the next
 * owner (docs/recovery.md#resume-after-a-takeover).
 */
export const OPERATOR_STOP_REASON = "StoppedByOperator";

/** True when a recorded transition reason (`Reason: detail`) is an operator's stop. */
export function isOperatorStop(reason: unknown): boolean {
  return typeof reason === "string" && reason.startsWith(`${OPERATOR_STOP_REASON}:`);
}
