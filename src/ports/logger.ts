/**
 * The Logger port: operators read JSON lines, so every datum goes in a fixed field vocabulary
 * (never interpolated into the message) and secrets never leave the process. An object literal
 * with a key outside {@link LogFields} is a type error; adapters drop such keys at runtime too.
 *
 * The vocabulary follows the ER operation model rather than a run/step model: an operation is
 * one node step of one plan, phases sit beneath it, and a plan is identified by its digest.
 */
import type { OperationState, Phase, ResponseClass } from "../domain/operation.ts";

/** Log levels, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * The only keys a log entry may carry. Values are scalars so a line stays greppable; a string
 * value is still passed through redaction (an error message may quote a URL with a password).
 */
export interface LogFields {
  /** Plan name as written in `metadata.name`. */
  readonly planName?: string;
  /** SHA-256 hex of the plan file bytes: the plan's identity. */
  readonly planDigest?: string;
  /** Cluster the plan targets (one rollout slot per cluster). */
  readonly cluster?: string;
  /** Journal operation id (`op_…`). */
  readonly operationId?: string;
  /** Attempt number within the operation, 1-based. */
  readonly attempt?: number;
  /** Node (machine) name. */
  readonly node?: string;
  /** Phase of a node step (`drain`, `reboot`, …). */
  readonly phase?: Phase;
  /** Operation state after the event. */
  readonly state?: OperationState;
  /** How an attempt's request ended. */
  readonly responseClass?: ResponseClass;
  /** Stable reason code from the reason catalogue. */
  readonly reason?: string;
  /** Health verdict (`pass`, `fail`, `unreadable`) or a policy verdict. */
  readonly verdict?: string;
  /** Machine revision from the journal's per-machine counter. */
  readonly revision?: number;
  /** Git commit id. */
  readonly commit?: string;
  /** Git branch name. */
  readonly branch?: string;
  /** Repository-relative path (plan file, report file) or a local file path. */
  readonly path?: string;
  /** A URL; userinfo and secret-looking query values are always redacted. */
  readonly url?: string;
  /** Wall or virtual duration of the logged action, in milliseconds. */
  readonly durationMs?: number;
  /** A count (plans found, operations listed, lines dropped). */
  readonly count?: number;
  /** Error message of a caught error (redacted like every string). */
  readonly error?: string;
  /** A leader-election Lease, `namespace/name`. */
  readonly lease?: string;
  /** A leader-election identity (this replica's, or the Lease holder's). */
  readonly identity?: string;
}

/** One key of the vocabulary. */
export type LogFieldKey = keyof LogFields;

/** Structured logging for operators. Messages are short, lower-case, present-tense phrases. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every entry (call-site fields win on conflict). */
  child(fields: LogFields): Logger;
}
