import type { Verdict } from "../../domain/health/types.ts";
import type { Reason } from "../../domain/reasons.ts";

/**
 * Why a node step stopped short of completion, and how the operation must be classified.
 * `unresolved` holds the scope (the default for any gap in evidence); `failed` is only for a
 * fully accounted operation whose completion observation contradicts the postconditions;
 * `stopped` means the controller was asked to stop between steps (the operation is resumed, not
 * rerun, by the next owner).
 */
export interface Halt {
  readonly classify: "unresolved" | "failed" | "stopped";
  readonly reason: Reason;
  readonly detail: string;
  /**
   * The bound health verdict the halt rests on, when a health round decided it; the completion
   * observation records it so a failed bound check contradicts the postconditions.
   */
  readonly health?: Verdict;
}

export function unresolved(reason: Reason, detail: string): Halt {
  return { classify: "unresolved", reason, detail };
}

export function failed(reason: Reason, detail: string): Halt {
  return { classify: "failed", reason, detail };
}

/** Result of a phase: carry on, or halt. */
export type PhaseResult<T = undefined> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly halt: Halt };

export function proceed<T>(value: T): PhaseResult<T> {
  return { ok: true, value };
}

export function halt<T = never>(h: Halt): PhaseResult<T> {
  return { ok: false, halt: h };
}
