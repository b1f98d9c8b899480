/**
 * Checks of the files a plan binds besides the catalogue: the health policy (every kind) and the
 * pinned-evidence manifest (TalosUpgrade, KubernetesUpgrade). Pure: the caller reads the files
 * and hands over their text and SHA-256; these functions compare digests, parse the contents
 * and relate them to the plan. A file that changed after approval is a digest mismatch, never
 * silently used.
 */
import { ContentMemo } from "../content_memo.ts";
import { formatProblem, type Problem } from "../errors.ts";
import { parseEvidenceManifest } from "../evidence/manifest.ts";
import { parseHealthPolicyStructure } from "../health/policy_structure.ts";
import type { Reason } from "../reasons.ts";
import type { PlanIssue } from "./parse.ts";
import type { BoundFile, Plan } from "./schema.ts";

/**
 * What reading one bound file produced. `refused`: the reader would not open it (the path leaves
 * the repository, goes through a symlink, names a non-regular file or one over the size cap),
 * with the reason it reports.
 */
export type BoundFileLoad =
  | { readonly status: "missing"; readonly detail: string }
  | { readonly status: "refused"; readonly reason: Reason; readonly detail: string }
  | { readonly status: "read"; readonly sha256: string; readonly text: string };

/** The bound files as read, keyed by role; a role the plan does not bind is absent. */
export interface BoundFileLoads {
  readonly healthPolicy?: BoundFileLoad;
  readonly evidence?: BoundFileLoad;
}

/** The files `plan` binds besides its catalogue, keyed by role. */
export function boundFiles(plan: Plan): { healthPolicy: BoundFile; evidence?: BoundFile } {
  const evidence = plan.kind === "TalosUpgrade" || plan.kind === "KubernetesUpgrade"
    ? plan.spec.evidence
    : undefined;
  return { healthPolicy: plan.spec.healthPolicy, ...(evidence ? { evidence } : {}) };
}

interface RoleRules {
  readonly label: string;
  readonly missing: Reason;
  readonly mismatch: Reason;
  readonly invalid: Reason;
  /** Parses the text; returns its problems and, when it parsed, its cluster (if it has one). */
  readonly parse: (
    text: string,
    file: string,
  ) => { problems: readonly Problem[]; cluster?: string };
}

const RULES: Record<keyof BoundFileLoads, RoleRules> = {
  healthPolicy: {
    label: "Health policy",
    missing: "HealthPolicyMissing",
    mismatch: "HealthPolicyDigestMismatch",
    invalid: "HealthPolicyInvalid",
    parse: (text, file) => {
      const r = parseHealthPolicyStructure(text, file);
      return r.ok ? { problems: [], cluster: r.policy.cluster } : { problems: r.problems };
    },
  },
  evidence: {
    label: "Evidence manifest",
    missing: "EvidenceManifestMissing",
    mismatch: "EvidenceManifestDigestMismatch",
    invalid: "EvidenceManifestInvalid",
    parse: (text, file) => {
      const r = parseEvidenceManifest(text, file);
      return { problems: r.ok ? [] : r.problems };
    },
  },
};

/**
 * Every issue of the plan's bound health policy and evidence manifest: missing file, digest
 * different from the bound one, contents that do not parse, a policy for another cluster.
 * A role whose load is absent is not checked (the caller did not read it).
 */
export function checkBoundFiles(plan: Plan, loads: BoundFileLoads): PlanIssue[] {
  const bound = boundFiles(plan);
  const out: PlanIssue[] = [];
  for (const role of ["healthPolicy", "evidence"] as const) {
    const file = bound[role];
    const load = loads[role];
    if (file && load) out.push(...checkOne(role, file, load, plan.metadata.cluster));
  }
  return out;
}

/** Parses of bound files by role, path and digest (re-checked before every step, rarely changed). */
const parsedFiles = new ContentMemo<{ problems: readonly Problem[]; cluster?: string }>();

function checkOne(
  role: keyof BoundFileLoads,
  file: BoundFile,
  load: BoundFileLoad,
  cluster: string,
): PlanIssue[] {
  const rules = RULES[role];
  const at = (key: "path" | "sha256") => ["spec", role, key];
  if (load.status === "refused") {
    return [{
      reason: load.reason,
      message: `${rules.label} "${file.path}" is refused unread: ${load.detail}`,
      path: at("path"),
    }];
  }
  if (load.status === "missing") {
    return [{
      reason: rules.missing,
      message: `${rules.label} "${file.path}" is missing (${load.detail})`,
      path: at("path"),
    }];
  }
  if (load.sha256 !== file.sha256) {
    return [{
      reason: rules.mismatch,
      message:
        `${rules.label} "${file.path}" has digest ${load.sha256}, the plan binds ${file.sha256}`,
      path: at("sha256"),
    }];
  }
  const parsed = parsedFiles.get(
    `${role}\0${file.path}\0${load.sha256}`,
    () => rules.parse(load.text, file.path),
  );
  const first = parsed.problems[0];
  if (first) {
    const more = parsed.problems.length > 1 ? ` (and ${parsed.problems.length - 1} more)` : "";
    return [{
      reason: rules.invalid,
      message: `${rules.label} "${file.path}" does not parse: ${formatProblem(first)}${more}`,
      path: at("path"),
    }];
  }
  if (parsed.cluster !== undefined && parsed.cluster !== cluster) {
    return [{
      reason: "HealthPolicyClusterMismatch",
      message: `${rules.label} "${file.path}" is written for cluster ${parsed.cluster}, ` +
        `the plan targets ${cluster}`,
      path: at("path"),
    }];
  }
  return [];
}
