/**
 * Plan file → schema-valid `Plan`, with every problem located (file:line:column, field path,
 * reason). Semantic rules are in `checks.ts`; `located()` maps their field paths back to the file.
 */
import { plainIssueMessage } from "../plain_issue.ts";
import type { core } from "zod";
import { CairnError, type Problem } from "../errors.ts";
import { isReason, type Reason } from "../reasons.ts";
import { sha256Hex } from "./digest.ts";
import { type Plan, PlanSchema } from "./schema.ts";
import { type FieldPath, formatPath, type LoadedYaml, loadYaml, locate } from "./yaml_load.ts";

/** A plan that passed YAML and schema validation, with its identity and source map. */
export interface ParsedPlan {
  readonly plan: Plan;
  /** Plan identity: SHA-256 hex of the exact file bytes. */
  readonly sha256: string;
  readonly file: string;
  /** Kept so later (semantic) problems can be located in the file. */
  readonly source: LoadedYaml;
}

/** Result of {@link safeParsePlan}. */
export type SafeParsePlanResult =
  | { readonly ok: true; readonly parsed: ParsedPlan }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Options of {@link parsePlan}. */
export interface ParsePlanOptions {
  /** File name used in locations (as the user named it). */
  readonly file: string;
  readonly maxBytes?: number;
  readonly maxAliasCount?: number;
}

/** A problem found at a field path, before it is located in the file. */
export interface PlanIssue {
  readonly reason: Reason;
  readonly message: string;
  readonly path: FieldPath;
  /** Set when the problem is about a key of the mapping at `path` (unknown fields). */
  readonly key?: string;
}

/** Maps issues to located problems, ordered by position in the file. */
export function located(source: LoadedYaml, issues: readonly PlanIssue[]): Problem[] {
  const problems = issues.map((i): Problem => {
    const at = locate(source, i.path, i.key);
    const path = formatPath(i.key === undefined ? i.path : [...i.path, i.key]);
    return {
      reason: i.reason,
      message: i.message,
      location: { file: source.file, ...at, ...(path ? { path } : {}) },
    };
  });
  return problems.sort((a, b) =>
    (a.location!.line - b.location!.line) || (a.location!.column - b.location!.column)
  );
}

function schemaIssues(issues: readonly core.$ZodIssue[]): PlanIssue[] {
  return issues.flatMap((issue): PlanIssue[] => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        reason: "UnknownField",
        message: `Unknown field "${key}"; unknown fields are refused`,
        path: issue.path,
        key,
      }));
    }
    // A refinement may name its own catalogued reason (e.g. BoundPathInvalid).
    const named = issue.code === "custom" ? issue.params?.["reason"] : undefined;
    const reason = typeof named === "string" && isReason(named) ? named : "PlanSchemaInvalid";
    return [{ reason, message: plainIssueMessage(issue), path: issue.path }];
  });
}

/**
 * Loads and schema-validates a plan from its exact bytes. Never throws for bad input.
 *
 * @example
 * ```ts ignore
 * const r = await safeParsePlan(bytes, { file: "plans/talos-v1.14.2.yaml" });
 * if (!r.ok) for (const p of r.problems) console.error(formatProblem(p));
 * ```
 */
export async function safeParsePlan(
  bytes: Uint8Array,
  options: ParsePlanOptions,
): Promise<SafeParsePlanResult> {
  const loadedResult = loadYaml(bytes, options);
  if (!loadedResult.ok) return { ok: false, problems: loadedResult.problems };
  const source = loadedResult.loaded;
  const result = PlanSchema.safeParse(source.value);
  if (!result.success) {
    return { ok: false, problems: located(source, schemaIssues(result.error.issues)) };
  }
  return {
    ok: true,
    parsed: { plan: result.data, sha256: await sha256Hex(bytes), file: options.file, source },
  };
}

/** Like {@link safeParsePlan} but throws a `CairnError` carrying the first problem. */
export async function parsePlan(bytes: Uint8Array, options: ParsePlanOptions): Promise<ParsedPlan> {
  const r = await safeParsePlan(bytes, options);
  if (!r.ok) throw new CairnError(r.problems[0]!);
  return r.parsed;
}
