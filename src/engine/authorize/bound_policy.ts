/**
 * The bound health policy is the policy: every path that runs a health round for a plan (apply,
 * rehearse, the reconciler, the demo, previews) takes the file the plan binds, read now through a
 * BoundFileSource and accepted only when its SHA-256 equals the bound digest (the same check as
 * `cairn plan check`). There is no other policy to fall back to.
 */
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import { parseHealthPolicy } from "../../domain/health/policy_parse.ts";
import { type BoundFileLoad, checkBoundFiles } from "../../domain/plan/bound_files.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";

/** Reads one bound file and hashes it, in the shape `checkBoundFiles` takes. */
export async function loadBoundFile(files: BoundFileSource, path: string): Promise<BoundFileLoad> {
  const read = await files.read(path);
  if (read.status !== "read") return read;
  return {
    status: "read",
    sha256: await sha256Hex(read.bytes),
    text: new TextDecoder().decode(read.bytes),
  };
}

/** The plan's bound health policy, or why it cannot be used (with the plan check's reason). */
export type BoundPolicy =
  | { readonly ok: true; readonly policy: HealthPolicy; readonly sha256: string }
  | { readonly ok: false; readonly reason: Reason; readonly message: string };

/** Resolves the policy the plan binds; never another file. */
export async function boundHealthPolicy(plan: Plan, files: BoundFileSource): Promise<BoundPolicy> {
  const bound = plan.spec.healthPolicy;
  const load = await loadBoundFile(files, bound.path);
  const issue = checkBoundFiles(plan, { healthPolicy: load })[0];
  if (issue) return { ok: false, reason: issue.reason, message: issue.message };
  if (load.status !== "read") throw new TypeError("a checked policy load is always read");
  const parsed = parseHealthPolicy(load.text, bound.path);
  if (!parsed.ok) {
    return {
      ok: false,
      reason: "HealthPolicyInvalid",
      message: `Health policy "${bound.path}": ${parsed.problems[0]!.message}`,
    };
  }
  return { ok: true, policy: parsed.policy, sha256: load.sha256 };
}
