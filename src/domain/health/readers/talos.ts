import type { Reason } from "../../reasons.ts";
import type { Binding } from "../policy_schema.ts";
import type {
  BindingResult,
  Finding,
  KubeObjectLike,
  ObservationBasis,
  ReadInputs,
  TalosNodeObservation,
} from "../types.ts";
import { finish, NODE_KEY, selectNodes, staleness, unreadableResult } from "./common.ts";

type NodeSel = { names?: readonly string[] | undefined; labelSelector?: object | undefined };
const CP_LABEL = "node-role.kubernetes.io/control-plane";

/** Node names for a Talos binding: explicit names, else nodes from the Node cache. */
function nodeNames(
  b: Binding,
  sel: NodeSel,
  inputs: ReadInputs,
  controlPlaneOnly: boolean,
): string[] | { reason: Reason; message: string } {
  if (sel.names && !sel.labelSelector) return [...sel.names];
  const snap = inputs.kube.resource(NODE_KEY);
  const stale = staleness(snap, NODE_KEY, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) return stale!;
  let nodes: KubeObjectLike[] = selectNodes(snap.items, sel);
  if (controlPlaneOnly && !sel.labelSelector && !sel.names) {
    nodes = nodes.filter((n) => n.metadata?.labels?.[CP_LABEL] !== undefined);
  }
  return nodes.map((n) => n.metadata?.name ?? "");
}

/** The node's Talos observation if it is usable for this binding, else an unreadable finding. */
function usable(
  b: Binding,
  node: string,
  inputs: ReadInputs,
): TalosNodeObservation | Finding {
  const o = inputs.talos.node(node);
  if (!o) {
    return {
      subject: node,
      node,
      verdict: "unreadable",
      reason: "HealthResultMissing",
      message: "not read",
    };
  }
  if (o.error) return { subject: node, node, verdict: "unreadable", ...o.error };
  if (inputs.nowMs - o.observedAtMs > b.freshnessSeconds * 1000) {
    return {
      subject: node,
      node,
      verdict: "unreadable",
      reason: "HealthObservationTooOld",
      message: `read ${Math.round((inputs.nowMs - o.observedAtMs) / 1000)}s ago`,
    };
  }
  return o;
}

function talosBasis(o: TalosNodeObservation): ObservationBasis {
  return { kind: "TalosNode", name: o.node, observedAtMs: o.observedAtMs, source: "talos" };
}

function isFinding(x: TalosNodeObservation | Finding): x is Finding {
  return "verdict" in x;
}

/**
 * etcd: every member started and healthy as reported by its own node, no learners, no alarms,
 * and a quorum of healthy members remains after the target's member leaves (or, without a
 * target, after any one member leaves).
 */
export function readTalosEtcd(
  b: Extract<Binding, { reader: "talos-etcd" }>,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const names = nodeNames(b, b.selection, inputs, true);
  if (!Array.isArray(names)) {
    return unreadableResult(b, names.reason, names.message, startedAtMs, inputs.nowMs);
  }
  const findings: Finding[] = [];
  const obs: TalosNodeObservation[] = [];
  for (const n of names) {
    const o = usable(b, n, inputs);
    if (isFinding(o)) findings.push(o);
    else if (!o.etcd) {
      findings.push({
        subject: n,
        node: n,
        verdict: "unreadable",
        reason: "HealthResultMissing",
        message: "no etcd status",
      });
    } else obs.push(o);
  }
  if (findings.length === 0) findings.push(...etcdFindings(obs, inputs.target?.node));
  return finish(b, inputs, startedAtMs, findings, obs.map(talosBasis), obs.length);
}

/** Pure etcd evaluation over the per-node observations. */
export function etcdFindings(obs: readonly TalosNodeObservation[], target?: string): Finding[] {
  const out: Finding[] = [];
  const lists = obs.map((o) => o.etcd!.members.map((m) => m.id).sort().join(","));
  if (new Set(lists).size > 1) {
    out.push({
      subject: "etcd",
      verdict: "fail",
      reason: "EtcdMemberUnhealthy",
      message: "nodes disagree on the member list",
    });
  }
  const members = obs[0]?.etcd?.members ?? [];
  const healthy = new Set<string>();
  for (const o of obs) {
    const e = o.etcd!;
    for (const a of e.alarms) {
      out.push({
        subject: o.node,
        node: o.node,
        verdict: "fail",
        reason: "EtcdAlarmActive",
        message: `alarm ${a}`,
      });
    }
    if (e.errors.length === 0) healthy.add(e.memberId);
    else {out.push({
        subject: o.node,
        node: o.node,
        verdict: "fail",
        reason: "EtcdMemberUnhealthy",
        message: e.errors.join("; "),
      });}
  }
  for (const m of members) {
    if (m.isLearner) {
      out.push({
        subject: m.hostname,
        node: m.hostname,
        verdict: "fail",
        reason: "EtcdLearnerPresent",
        message: `member ${m.id} is a learner`,
      });
    } else if (!healthy.has(m.id)) {
      out.push({
        subject: m.hostname,
        node: m.hostname,
        verdict: "fail",
        reason: "EtcdMemberUnhealthy",
        message: `member ${m.id} not reported healthy`,
      });
    }
  }
  const quorum = Math.floor(members.length / 2) + 1;
  const remaining = target
    ? members.filter((m) => healthy.has(m.id) && m.hostname !== target).length
    : healthy.size - 1;
  if (members.length > 0 && remaining < quorum) {
    out.push({
      subject: "etcd",
      verdict: "fail",
      reason: "EtcdQuorumAtRisk",
      message:
        `${remaining} healthy member(s) would remain of ${members.length}; quorum is ${quorum}`,
    });
  }
  if (out.length === 0) {
    out.push({
      subject: "etcd",
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: `${members.length} members healthy`,
    });
  }
  return out;
}

/** Named Talos services are Running and healthy on every selected node. */
export function readTalosServices(
  b: Extract<Binding, { reader: "talos-services" }>,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const names = nodeNames(b, b.selection, inputs, false);
  if (!Array.isArray(names)) {
    return unreadableResult(b, names.reason, names.message, startedAtMs, inputs.nowMs);
  }
  const findings: Finding[] = [];
  const basis: ObservationBasis[] = [];
  for (const n of names) {
    const o = usable(b, n, inputs);
    if (isFinding(o)) {
      findings.push(o);
      continue;
    }
    basis.push(talosBasis(o));
    for (const id of b.predicate.services) {
      const s = o.services?.find((x) => x.id === id);
      const ok = s !== undefined && s.state === "Running" && s.healthy !== false;
      findings.push({
        subject: `${n}/${id}`,
        node: n,
        verdict: ok ? "pass" : "fail",
        reason: ok ? "HealthCheckPassed" : "TalosServiceUnhealthy",
        message: s ? `state ${s.state}, healthy ${String(s.healthy)}` : "service not reported",
      });
    }
  }
  return finish(b, inputs, startedAtMs, findings, basis, basis.length);
}

/**
 * Talos version, schematic and kubelet version per node. Talos API readings are preferred;
 * without them the Node object's osImage and schematic annotation are used (protocols A5).
 */
export function readNodeVersions(
  b: Extract<Binding, { reader: "node-versions" }>,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const snap = inputs.kube.resource(NODE_KEY);
  const stale = staleness(snap, NODE_KEY, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) {
    return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
  }
  const nodes = selectNodes(snap.items, b.selection);
  const findings: Finding[] = [];
  const basis: ObservationBasis[] = [];
  for (const n of nodes) {
    const name = n.metadata?.name ?? "";
    const info = ((n["status"] as { nodeInfo?: Record<string, string> } | undefined)?.nodeInfo) ??
      {};
    const t = inputs.talos.node(name);
    const talosOk = t && !t.error && inputs.nowMs - t.observedAtMs <= b.freshnessSeconds * 1000;
    const version = (talosOk ? t.version : undefined) ??
      /Talos \((v[^)]+)\)/.exec(info["osImage"] ?? "")?.[1];
    const schematic = (talosOk ? t.schematic : undefined) ??
      n.metadata?.annotations?.["extensions.talos.dev/schematic"];
    const checks: [
      string | undefined,
      string | undefined,
      "NodeVersionMismatch" | "NodeSchematicMismatch" | "NodeKubeletMismatch",
      string,
    ][] = [
      [b.predicate.talosVersion, version, "NodeVersionMismatch", "Talos"],
      [b.predicate.schematic, schematic, "NodeSchematicMismatch", "schematic"],
      [b.predicate.kubeletVersion, info["kubeletVersion"], "NodeKubeletMismatch", "kubelet"],
    ];
    for (const [want, got, reason, what] of checks) {
      if (want === undefined) continue;
      findings.push(
        got === undefined
          ? {
            subject: name,
            node: name,
            verdict: "unreadable",
            reason: "HealthStatusMissing",
            message: `${what} not reported`,
          }
          : got === want
          ? {
            subject: name,
            node: name,
            verdict: "pass",
            reason: "HealthCheckPassed",
            message: `${what} ${got}`,
          }
          : {
            subject: name,
            node: name,
            verdict: "fail",
            reason,
            message: `${what} ${got}, expected ${want}`,
          },
      );
    }
    basis.push({
      kind: "Node",
      name,
      observedAtMs: inputs.nowMs,
      source: "watch-cache",
      cache: snap.freshness,
      ...(n.metadata?.uid ? { uid: n.metadata.uid } : {}),
      ...(n.metadata?.resourceVersion ? { resourceVersion: n.metadata.resourceVersion } : {}),
    });
    // A Talos reading is this result's basis only where a check judged one of its values: another
    // binding's reading of the same node is not this one's.
    const judgedTalos = (b.predicate.talosVersion !== undefined && t?.version !== undefined) ||
      (b.predicate.schematic !== undefined && t?.schematic !== undefined);
    if (talosOk && judgedTalos) basis.push(talosBasis(t));
  }
  return finish(b, inputs, startedAtMs, findings, basis, nodes.length);
}
