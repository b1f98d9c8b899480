import type { Binding } from "../policy_schema.ts";
import type { BindingResult, Finding, KubeObjectLike, ReadInputs } from "../types.ts";
import {
  finish,
  NODE_KEY,
  objectBasis,
  selectNodes,
  staleness,
  statusOf,
  unreadableResult,
} from "./common.ts";

type NodesBinding = Extract<Binding, { reader: "nodes" }>;

/** True when the node's Ready condition is "True". */
export function nodeReady(n: KubeObjectLike): boolean | undefined {
  const conds = statusOf(n)?.["conditions"];
  if (!Array.isArray(conds)) return undefined;
  return conds.some((c) => c?.type === "Ready" && c?.status === "True");
}

/**
 * Every selected node is Ready and schedulable. The only cordon tolerated is the named
 * target's, and only when the journal says this operation placed it.
 */
export function readNodes(b: NodesBinding, inputs: ReadInputs, startedAtMs: number): BindingResult {
  const snap = inputs.kube.resource(NODE_KEY);
  const stale = staleness(snap, NODE_KEY, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) {
    return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
  }
  const nodes = selectNodes(snap.items, b.selection);
  const findings: Finding[] = nodes.map((n) => nodeFinding(n, inputs));
  const basis = nodes.map((n) => objectBasis("Node", n, snap, inputs.nowMs));
  return finish(b, inputs, startedAtMs, findings, basis, nodes.length);
}

function nodeFinding(n: KubeObjectLike, inputs: ReadInputs): Finding {
  const subject = n.metadata?.name ?? "";
  const ready = nodeReady(n);
  if (ready === undefined) {
    return {
      subject,
      node: subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "node has no status conditions",
    };
  }
  if (!ready) {
    return {
      subject,
      node: subject,
      verdict: "fail",
      reason: "NodeNotReady",
      message: "Ready is not True",
    };
  }
  const cordoned = (n["spec"] as { unschedulable?: boolean } | undefined)?.unschedulable === true;
  if (!cordoned) {
    return {
      subject,
      node: subject,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: "Ready",
    };
  }
  const t = inputs.target;
  if (t && t.node === subject && t.operationOwnedCordon) {
    return {
      subject,
      node: subject,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: "Ready; cordoned by this operation (expected)",
    };
  }
  return {
    subject,
    node: subject,
    verdict: "fail",
    reason: "NodeCordoned",
    message: "unschedulable, and not the target's operation-owned cordon",
  };
}
