/**
 * What a ConfigApply node is judged on before anything is written, by the executor right before
 * its commitment and by the zero-write preview alike (docs/config-apply.md#mode-and-class): the
 * Talos version it runs (the plan's, and a minor that accepts the mode), its active and persistent
 * configuration (readable, and equal: no staged change pending), and the whole effective diff of
 * the patch merged onto the active document, classified for that minor, whose class must be the
 * declared one and reachable by the mode. Reads only.
 */
import {
  type Classification,
  classifyDiff,
  declaredClassRefusal,
  modeFitsClass,
  modeRejectedByVersion,
} from "../../domain/config_apply/classify.ts";
import {
  type ConfigValue,
  diffConfigs,
  mergePatch,
  PatchInvalid,
  sameValue,
} from "../../domain/config_apply/config_diff.ts";
import type { ConfigApplyPlan, PlanNode } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import { parseVersion } from "../../domain/version.ts";
import type { Talos } from "../../ports/talos.ts";
import { errorText } from "../executor/mutation.ts";
import { readMachineConfig } from "./readback.ts";

/** A node that may receive the apply: the document to send and its classification. */
export interface Assessed {
  readonly ok: true;
  readonly running: string;
  readonly target: ConfigValue;
  readonly classification: Classification;
}

/** Why a node may not: `refused` on contrary evidence, held when something was unreadable. */
export interface NotAssessed {
  readonly ok: false;
  readonly reason: Reason;
  readonly detail: string;
  readonly refused: boolean;
  readonly running?: string;
  readonly classification?: Classification;
}

/** Reads `node` and judges the plan's apply against what it runs now. */
export async function assessNode(
  talos: Talos,
  plan: ConfigApplyPlan,
  patch: ConfigValue,
  node: PlanNode,
  timeoutMs: number,
): Promise<Assessed | NotAssessed> {
  const spec = plan.spec;
  const no = (
    reason: Reason,
    detail: string,
    refused: boolean,
    extra: Partial<NotAssessed> = {},
  ) => ({ ok: false as const, reason, detail, refused, ...extra });
  let running: string;
  try {
    running = (await talos.version(node.address, { timeoutMs })).tag;
  } catch (e) {
    return no("NodeUnreadable", errorText(e), false);
  }
  if (running !== spec.talosVersion) {
    return no(
      "NodeVersionUnexpected",
      `${node.name} runs ${running}, plan expects ${spec.talosVersion}`,
      true,
      { running },
    );
  }
  const minor = parseVersion(running).minor;
  // The minor the node runs now decides, not the one the plan was written for.
  const rejected = modeRejectedByVersion(minor, spec.mode);
  if (rejected) return no(rejected.reason, `${node.name}: ${rejected.message}`, true, { running });
  const [active, persistent] = await Promise.all([
    readMachineConfig(talos, node.address, "v1alpha1", timeoutMs),
    readMachineConfig(talos, node.address, "persistent", timeoutMs),
  ]);
  if (!active.ok || !persistent.ok) {
    const why = !active.ok ? active.error : (persistent as { error: string }).error;
    return no("ConfigUnreadable", `${node.name}: ${why}`, false, { running });
  }
  if (!sameValue(active.doc, persistent.doc)) {
    return no(
      "ConfigStagedPending",
      `${node.name}: the persistent configuration differs from the active one ` +
        "(a staged change is pending)",
      true,
      { running },
    );
  }
  let target: ConfigValue;
  try {
    target = mergePatch(active.doc, patch);
  } catch (e) {
    if (e instanceof PatchInvalid) return no("ConfigPatchInvalid", e.message, true, { running });
    throw e;
  }
  const classification = classifyDiff(minor, diffConfigs(active.doc, target));
  const misfit = modeFitsClass(spec.mode, classification.overall) ??
    declaredClassRefusal(spec.activation, classification);
  if (misfit) {
    const unknown = classification.changes.filter((c) => c.class === "unknown")
      .map((c) => c.change.path);
    const detail = unknown.length ? `${misfit.message}: ${unknown.join(", ")}` : misfit.message;
    // Unknown holds for review; a mode or class that contradicts the plan refuses.
    return no(
      misfit.reason,
      `${node.name}: ${detail}`,
      misfit.reason !== "ConfigActivationUnknown",
      {
        running,
        classification,
      },
    );
  }
  return { ok: true, running, target, classification };
}
