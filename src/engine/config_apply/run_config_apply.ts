/**
 * Binding and running a ConfigApply plan (docs/config-apply.md): the plan recorded and approved in
 * the journal with one step per node, the dispatch check before the rollout, the bound patch read
 * now and held to its digest, then node by node in plan order through `runConfigNode`; the first
 * node that does not complete stops the rollout. Pure orchestration over ports, like
 * `engine/executor/run_plan.ts` for a TalosUpgrade.
 */
import { parse } from "yaml";
import type { ConfigValue } from "../../domain/config_apply/config_diff.ts";
import { hookAttempts } from "../../domain/ops/hook_attempts.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type { ConfigApplyPlan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Journal, StepBinding } from "../../ports/journal.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { BoundPlan } from "../executor/deps.ts";
import { digestOf, identityText, stepKey } from "../executor/digests.ts";
import { authorizeRollout } from "../executor/dispatch_gate.ts";
import { journalInEpoch } from "../executor/journal_in_epoch.ts";
import { runSteps, type StepsOutcome } from "../executor/step_loop.ts";
import {
  type BindInputs,
  dispatchAuthority,
  type ExecuteOptions,
  executionDeps,
  planOfKind,
  recordApprovedPlan,
} from "../executor/run_plan.ts";
import {
  type ConfigBound,
  type ConfigNodeOutcome,
  configPostText,
  runConfigNode,
} from "./config_step.ts";

/** Refuses anything but a ConfigApply plan. */
export function asConfigApply(parsed: ParsedPlan): ConfigApplyPlan {
  return planOfKind(parsed, "ConfigApply", "are not run by the ConfigApply executor");
}

/** One step per node: its identity before, the patch stored and every setting active after. */
export async function configStepBindings(plan: ConfigApplyPlan): Promise<StepBinding[]> {
  const cluster = plan.metadata.cluster;
  return await Promise.all(plan.spec.nodes.map(async (n) => ({
    step: stepKey(n.name),
    machine: n.name,
    preDigest: await digestOf(identityText(cluster, n)),
    postDigest: await digestOf(
      configPostText(cluster, n.name, plan.spec.config.sha256, "established"),
    ),
  })));
}

/** Records the plan and its approval; returns what the executor runs. */
export async function bindConfigApply(
  journal: Journal,
  o: BindInputs,
): Promise<BoundPlan<ConfigApplyPlan>> {
  const plan = asConfigApply(o.parsed);
  return await recordApprovedPlan(journal, o, plan, {
    // Apply, cordon, drain, reboot and uncordon per node, its node hooks' Job creates, plus the
    // plan's retry allowance.
    maxAttempts: 5 + hookAttempts(plan) + plan.spec.retry.maxAttempts,
    steps: await configStepBindings(plan),
  });
}

/** How a ConfigApply rollout ended, with each node's activation. */
export type ConfigRolloutOutcome = StepsOutcome<ConfigNodeOutcome>;

/** The bound patch as the repository has it now: refused unless it is the bound bytes. */
export async function readBoundPatch(
  files: BoundFileSource,
  plan: ConfigApplyPlan,
): Promise<{ ok: true; patch: ConfigValue } | { ok: false; reason: Reason; detail: string }> {
  const bound = plan.spec.config;
  const r = await files.read(bound.path);
  if (r.status !== "read") {
    return {
      ok: false,
      reason: "ConfigPatchDigestMismatch",
      detail: `config patch "${bound.path}": ${r.detail}`,
    };
  }
  const sha = await sha256Hex(r.bytes);
  if (sha !== bound.sha256) {
    return {
      ok: false,
      reason: "ConfigPatchDigestMismatch",
      detail: `config patch "${bound.path}" has digest ${sha}, the plan binds ${bound.sha256}`,
    };
  }
  let patch: unknown;
  try {
    patch = parse(new TextDecoder().decode(r.bytes));
  } catch (e) {
    return {
      ok: false,
      reason: "ConfigPatchInvalid",
      detail: `config patch "${bound.path}": ${(e as Error).message}`,
    };
  }
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    return {
      ok: false,
      reason: "ConfigPatchInvalid",
      detail: `config patch "${bound.path}" is not a YAML mapping`,
    };
  }
  return { ok: true, patch: patch as ConfigValue };
}

/**
 * Runs the rollout: the dispatch check and the patch read first (a refusal sends nothing), then
 * node by node with fresh health evidence gated by the plan's bound health policy.
 */
export async function executeConfigApply(
  o: Omit<ExecuteOptions, "bound"> & { readonly bound: BoundPlan<ConfigApplyPlan> },
): Promise<ConfigRolloutOutcome> {
  const plan = o.bound.plan;
  const authority = dispatchAuthority(plan, o.authority, { ...o, talos: o.cluster.talos });
  const first = plan.spec.nodes[0]!.name;
  const pre = await authorizeRollout(
    journalInEpoch(o.journal, o.epoch),
    o.owner,
    o.bound.digest,
    authority,
  );
  if (!pre.ok) {
    return {
      state: pre.stop.verdict === "refused" ? "refused" : "halted",
      nodes: [{
        node: first,
        operationId: undefined,
        state: "not-committed",
        reason: pre.stop.reason,
        detail: pre.stop.detail,
        refused: pre.stop.verdict === "refused",
      }],
    };
  }
  const patch = await readBoundPatch(o.authority.files, plan);
  if (!patch.ok) {
    return {
      state: "refused",
      nodes: [{
        node: first,
        operationId: undefined,
        state: "not-committed",
        reason: patch.reason,
        detail: patch.detail,
        refused: true,
      }],
    };
  }
  const { deps, evidence } = await executionDeps(o, plan, { policy: pre.policy, authority });
  const bound: ConfigBound = { plan, digest: o.bound.digest, patch: patch.patch };
  try {
    // A crashed controller's live operations are taken over (unresolved), never rerun.
    return await runSteps(deps, bound, {
      steps: plan.spec.nodes.map((node) => ({ key: stepKey(node.name), node })),
      run: (step) => runConfigNode(deps, bound, step.node),
    });
  } finally {
    evidence.stop();
  }
}
