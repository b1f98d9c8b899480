import type { Reason } from "./reasons.ts";

/** Where in an input a problem was found. Lines and columns are 1-based. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Field path inside the document, e.g. `spec.nodes[2].name`. */
  readonly path?: string;
}

/** Formats a location the way editors and CI annotators understand: `file:line:column`. */
export function formatLocation(loc: SourceLocation): string {
  return `${loc.file}:${loc.line}:${loc.column}`;
}

/** A problem with a stable reason code, an optional location, and structured details. */
export interface Problem {
  readonly reason: Reason;
  readonly message: string;
  readonly location?: SourceLocation;
  readonly details?: Readonly<Record<string, string | number | boolean>>;
}

/** Renders a problem as one human line: `file:line:col: Reason: message (at path)`. */
export function formatProblem(p: Problem): string {
  const where = p.location ? `${formatLocation(p.location)}: ` : "";
  const path = p.location?.path ? ` (at ${p.location.path})` : "";
  return `${where}${p.reason}: ${p.message}${path}`;
}

/**
 * The error cairn throws for a problem a caller may report to the user. Programmer errors use
 * the built-in TypeError / RangeError instead and map to `Internal`.
 */
export class CairnError extends Error {
  readonly reason: Reason;
  readonly location: SourceLocation | undefined;
  readonly details: Readonly<Record<string, string | number | boolean>>;

  constructor(problem: Problem, options?: ErrorOptions) {
    super(problem.message, options);
    this.name = "CairnError";
    this.reason = problem.reason;
    this.location = problem.location;
    this.details = problem.details ?? {};
  }

  /** The problem this error carries. */
  toProblem(): Problem {
    return {
      reason: this.reason,
      message: this.message,
      ...(this.location ? { location: this.location } : {}),
      details: this.details,
    };
  }
}
