/**
 * What the loop knows about one plan file at one commit: does it parse and pass its checks
 * (catalogue read from the same commit), do its signatures satisfy the approval policy under the
 * trust root, and is it the digest the journal already bound under its name. Makes no writes.
 */
import { parseCatalogue } from "../../domain/catalogue.ts";
import { CairnError, formatLocation, type Problem } from "../../domain/errors.ts";
import { boundFiles } from "../../domain/plan/bound_files.ts";
import { checkPlan } from "../../domain/plan/checks.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import { located, type ParsedPlan, safeParsePlan } from "../../domain/plan/parse.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import type { AllowedSigners } from "../../domain/trust/allowed_signers.ts";
import { evaluatePolicy, type PolicyVerdict } from "../../domain/trust/policy.ts";
import type { PlanFile, PlanSource } from "../../ports/plan_source.ts";
import type { PlanFacts } from "../../ports/reconcile.ts";
import type { ReasonNote } from "../../domain/reasons.ts";

/** What assessing needs. */
export interface AssessContext {
  readonly source: PlanSource;
  readonly signers: AllowedSigners;
  readonly requiredApprovals: number;
  readonly nowMs: number;
  readonly branch: string;
  readonly commit: string;
  /** The digest the journal bound under this plan's name, if any. */
  readonly boundDigest?: string;
}

/** Facts plus the parsed plan (for binding). */
export interface Assessed {
  readonly facts: PlanFacts;
  readonly parsed?: ParsedPlan;
}

/** Assesses one plan file; never throws for bad input. */
export async function assessPlan(file: PlanFile, ctx: AssessContext): Promise<Assessed> {
  const parsed = await safeParsePlan(file.bytes, { file: file.path });
  const digest = parsed.ok ? parsed.parsed.sha256 : await sha256Hex(file.bytes);
  const refusals: ReasonNote[] = [];
  if (ctx.boundDigest !== undefined && ctx.boundDigest !== digest) {
    refusals.push({
      reason: "PlanChangedAfterApproval",
      message: `the journal bound '${file.name}' to ${ctx.boundDigest.slice(0, 12)}…; ` +
        `this file is ${digest.slice(0, 12)}…. A changed plan needs a new name.`,
      where: file.path,
    });
  }
  const base = {
    name: file.name,
    path: file.path,
    branch: ctx.branch,
    commit: ctx.commit,
    digest,
    requiredApprovals: ctx.requiredApprovals,
  };
  if (!parsed.ok) {
    refusals.push(...parsed.problems.map(problemNote));
    return { facts: { ...base, problems: parsed.problems, refusals } };
  }
  const { plan, source } = parsed.parsed;
  await prefetchBoundFiles(plan, ctx);
  const problems = located(source, checkPlan(plan, await checkContext(plan, ctx)));
  refusals.push(...problems.map(problemNote));
  if (plan.metadata.name !== file.name) {
    refusals.push({
      reason: "PlanInvalid",
      message: `metadata.name '${plan.metadata.name}' differs from the file name '${file.name}'`,
      where: file.path,
    });
  }
  const policy = await verdict(file, plan, ctx);
  refusals.push(...policyNotes(policy, file.path));
  return {
    facts: { ...base, plan, problems, policy, refusals },
    parsed: parsed.parsed,
  };
}

/**
 * Every path the plan's bound files may be read at, at this commit: the catalogue and evidence
 * manifest resolve from `plans/` first, then the repository root; the health policy is read at its
 * path (the dispatch check). Read at once, they cost two git processes instead of two or three
 * each. A failed read-ahead is ignored: each file is then read, and refused, on its own.
 */
async function prefetchBoundFiles(plan: Plan, ctx: AssessContext): Promise<void> {
  if (!ctx.source.prefetch) return;
  const paths = boundPathCandidates(plan);
  await ctx.source.prefetch(ctx.commit, paths).catch(() => {});
}

/** The paths {@link prefetchBoundFiles} reads. */
export function boundPathCandidates(plan: Plan): string[] {
  const either = (path: string) => [`plans/${path}`, path];
  const { healthPolicy, evidence } = boundFiles(plan);
  return [
    ...(plan.spec.catalogue ? either(plan.spec.catalogue.path) : []),
    ...(evidence ? either(evidence.path) : []),
    healthPolicy.path,
  ];
}

function problemNote(p: Problem): ReasonNote {
  return {
    reason: p.reason,
    message: p.message,
    ...(p.location ? { where: formatLocation(p.location) } : {}),
  };
}

async function checkContext(plan: Plan, ctx: AssessContext) {
  const bound = plan.spec.catalogue;
  if (!bound) return { nowMs: ctx.nowMs, catalogue: undefined };
  // Bound paths resolve from the plan's directory upwards, as `cairn plan check` does.
  for (const path of [`plans/${bound.path}`, bound.path]) {
    const bytes = await ctx.source.readFile(ctx.commit, path);
    if (!bytes) continue;
    try {
      return { nowMs: ctx.nowMs, catalogue: await parseCatalogue(bytes, path) };
    } catch (e) {
      if (e instanceof CairnError) return { nowMs: ctx.nowMs, catalogue: undefined };
      throw e;
    }
  }
  return { nowMs: ctx.nowMs, catalogue: undefined };
}

function verdict(file: PlanFile, plan: Plan, ctx: AssessContext): Promise<PolicyVerdict> {
  return evaluatePolicy({
    plan: file.bytes,
    signatures: file.signature ? new TextDecoder().decode(file.signature) : undefined,
    signers: ctx.signers,
    author: plan.metadata.author,
    requiredApprovals: ctx.requiredApprovals,
    atMs: ctx.nowMs,
  });
}

function policyNotes(policy: PolicyVerdict, path: string): ReasonNote[] {
  if (policy.ok) return [];
  const sigPath = `${path}.sig`;
  return policy.reasons.map((reason): ReasonNote => {
    const bad = policy.signatures.find((s) => s.reason === reason);
    return bad
      ? { reason, message: bad.message, where: `${sigPath}:${bad.line}` }
      : { reason, message: policy.summary, where: sigPath };
  });
}
