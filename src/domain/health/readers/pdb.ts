import type { Binding } from "../policy_schema.ts";
import { type SelectorLike, selectorMatches } from "../selector.ts";
import type {
  BindingResult,
  Finding,
  KubeObjectLike,
  ObservationBasis,
  ReadInputs,
  ResourceSnapshot,
} from "../types.ts";
import {
  finish,
  generationStale,
  memo,
  NODE_KEY,
  objectBasis,
  objectId,
  PDB_KEY,
  POD_KEY,
  selectNodes,
  staleness,
  statusOf,
  unreadableResult,
} from "./common.ts";

type PdbBinding = Extract<Binding, { reader: "pdb-feasibility" }>;

/** Pods by node and the PDBs selecting each pod, derived once per cache content. */
interface PdbIndex {
  readonly podsByNode: ReadonlyMap<string, readonly KubeObjectLike[]>;
  readonly pdbsFor: (pod: KubeObjectLike) => readonly KubeObjectLike[];
}

/**
 * Whether each selected node could be drained through the Eviction API now: every evictable
 * pod on it is matched to its budgets; a budget that can never allow the eviction is a
 * permanent blocker, one that allows none right now is a temporary blocker. A budget blocks
 * only the nodes whose pods it selects.
 */
export function readPdbFeasibility(
  b: PdbBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const snaps: ResourceSnapshot[] = [];
  for (const key of [NODE_KEY, POD_KEY, PDB_KEY]) {
    const snap = inputs.kube.resource(key);
    const stale = staleness(snap, key, b.freshnessSeconds, inputs.nowMs);
    if (stale || !snap) {
      return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
    }
    snaps.push(snap);
  }
  const [nodeSnap, podSnap, pdbSnap] = snaps as [
    ResourceSnapshot,
    ResourceSnapshot,
    ResourceSnapshot,
  ];
  const nodes = scopeNodes(b, nodeSnap.items, inputs);
  const index = pdbIndex(podSnap, pdbSnap);
  const findings: Finding[] = [];
  const used = new Set<KubeObjectLike>();
  for (const n of nodes) {
    const name = n.metadata?.name ?? "";
    findings.push(...nodeFindings(b, name, index, used));
  }
  const basis: ObservationBasis[] = [
    ...nodes.map((n) => objectBasis("Node", n, nodeSnap, inputs.nowMs)),
    ...[...used].map((p) => objectBasis("PodDisruptionBudget", p, pdbSnap, inputs.nowMs)),
  ];
  return finish(b, inputs, startedAtMs, findings, basis, nodes.length);
}

function scopeNodes(b: PdbBinding, all: readonly KubeObjectLike[], inputs: ReadInputs) {
  const s = b.selection.nodes;
  if (s === "all") return [...all];
  if (s === "target") {
    return inputs.target ? all.filter((n) => n.metadata?.name === inputs.target!.node) : [];
  }
  return selectNodes(all, s);
}

/** Pods a drain would evict: not terminal, not a mirror pod, not DaemonSet-owned. */
function evictable(p: KubeObjectLike): boolean {
  const phase = statusOf(p)?.["phase"];
  if (phase === "Succeeded" || phase === "Failed") return false;
  if (p.metadata?.annotations?.["kubernetes.io/config.mirror"] !== undefined) return false;
  const owners = (p.metadata as { ownerReferences?: { kind?: string; controller?: boolean }[] })
    .ownerReferences ?? [];
  return !owners.some((o) => o.controller === true && o.kind === "DaemonSet");
}

/**
 * Pod → budgets is memoised per pod object (a watch event replaces only the changed pod's
 * object), in a table that lives as long as the PDB cache's content; pods by node are memoised
 * on the pod cache. A quiet round rebuilds nothing; a round after a few pod events matches only
 * those pods again.
 */
const MATCHES = new WeakMap<object, WeakMap<KubeObjectLike, readonly KubeObjectLike[]>>();

function pdbIndex(podSnap: ResourceSnapshot, pdbSnap: ResourceSnapshot): PdbIndex {
  const byNs = memo(pdbSnap, "pdbsByNamespace", () => groupPdbs(pdbSnap.items));
  const podsByNode = memo(podSnap, "podsByNode", () => groupPods(podSnap.items));
  const owner = pdbSnap.memo ?? {};
  let table = MATCHES.get(owner);
  if (!table) MATCHES.set(owner, table = new WeakMap());
  const t = table;
  const pdbsFor = (pod: KubeObjectLike): readonly KubeObjectLike[] => {
    let m = t.get(pod);
    if (!m) {
      const labels = pod.metadata?.labels;
      m = (byNs.get(pod.metadata?.namespace ?? "") ?? [])
        .filter(([sel]) => selectorMatches(sel, labels)).map(([, pdb]) => pdb);
      t.set(pod, m);
    }
    return m;
  };
  return { podsByNode, pdbsFor };
}

function groupPdbs(pdbs: readonly KubeObjectLike[]) {
  const byNs = new Map<string, [SelectorLike, KubeObjectLike][]>();
  for (const pdb of pdbs) {
    const sel = (pdb["spec"] as { selector?: SelectorLike | null } | undefined)?.selector;
    if (!sel) continue; // a null selector matches nothing (policy/v1)
    push(byNs, pdb.metadata?.namespace ?? "", [sel, pdb] as [SelectorLike, KubeObjectLike]);
  }
  return byNs;
}

function groupPods(pods: readonly KubeObjectLike[]) {
  const byNode = new Map<string, KubeObjectLike[]>();
  for (const p of pods) {
    const node = (p["spec"] as { nodeName?: string } | undefined)?.nodeName;
    if (node) push(byNode, node, p);
  }
  return byNode;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

function nodeFindings(
  b: PdbBinding,
  node: string,
  index: PdbIndex,
  used: Set<KubeObjectLike>,
): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const pod of index.podsByNode.get(node) ?? []) {
    if (!evictable(pod)) continue;
    const pdbs = index.pdbsFor(pod);
    pdbs.forEach((p) => used.add(p));
    const f = podFinding(node, pod, pdbs);
    if (!f) continue;
    const key = `${f.reason}|${f.subject}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(tolerated(b, pdbs, f));
  }
  if (out.length === 0) {
    out.push({
      subject: node,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: "drain feasible",
    });
  }
  return out;
}

/** Applies the binding's explicit tolerances: temporary blockers, operator-handled budgets. */
function tolerated(b: PdbBinding, pdbs: readonly KubeObjectLike[], f: Finding): Finding {
  if (f.verdict !== "fail") return f;
  if (f.blocker === "temporary" && !b.failOnTemporary) return { ...f, verdict: "pass" };
  const pdb = pdbs.length === 1 ? pdbs[0]! : undefined;
  const handled = pdb &&
    b.operatorHandled.find((h) =>
      h.namespace === pdb.metadata?.namespace && h.name === pdb.metadata?.name
    );
  if (!handled) return f;
  return { ...f, verdict: "pass", message: `${f.message} (operator-handled: ${handled.reason})` };
}

/** The blocker one pod's budgets put on its node's drain, if any. */
export function podFinding(
  node: string,
  pod: KubeObjectLike,
  pdbs: readonly KubeObjectLike[],
): Finding | undefined {
  if (pdbs.length === 0) return undefined;
  if (pdbs.length > 1) {
    return {
      subject: `${node} pod ${objectId(pod)}`,
      verdict: "fail",
      reason: "PdbMultipleMatch",
      message: `selected by ${pdbs.map(objectId).join(", ")}; the Eviction API refuses such a pod`,
      blocker: "permanent",
    };
  }
  const pdb = pdbs[0]!;
  const subject = `${node} PDB ${objectId(pdb)}`;
  const status = statusOf(pdb);
  if (!status) {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "PDB has no status",
    };
  }
  const permanent = permanentBlock(pdb, status);
  if (permanent) {
    return {
      subject,
      verdict: "fail",
      reason: "PdbBlocksPermanently",
      message: permanent,
      blocker: "permanent",
    };
  }
  if (generationStale(pdb, status)) {
    return {
      subject,
      verdict: "fail",
      reason: "HealthGenerationStale",
      message: "status is from an older generation; evictions answer 429 until it catches up",
      blocker: "temporary",
    };
  }
  if (!podReady(pod)) return unhealthyPodFinding(subject, pdb, status);
  return budgetFinding(subject, status);
}

function budgetFinding(subject: string, status: Record<string, unknown>): Finding | undefined {
  const allowed = status["disruptionsAllowed"];
  if (typeof allowed === "number" && allowed > 0) return undefined;
  return {
    subject,
    verdict: "fail",
    reason: "PdbBlocksTemporarily",
    message: `disruptionsAllowed ${String(allowed ?? 0)} (healthy ${
      String(status["currentHealthy"] ?? "?")
    }/${String(status["desiredHealthy"] ?? "?")})`,
    blocker: "temporary",
  };
}

/** A not-Ready pod's eviction under the budget's unhealthyPodEvictionPolicy (protocols B1 step 3). */
function unhealthyPodFinding(
  subject: string,
  pdb: KubeObjectLike,
  status: Record<string, unknown>,
): Finding | undefined {
  const policy = (pdb["spec"] as { unhealthyPodEvictionPolicy?: string } | undefined)
    ?.unhealthyPodEvictionPolicy ?? "IfHealthyBudget";
  if (policy === "AlwaysAllow") return undefined;
  if (policy !== "IfHealthyBudget") {
    return {
      subject,
      verdict: "fail",
      reason: "PdbPolicyUnknown",
      message:
        `unhealthyPodEvictionPolicy ${policy} is not recognised; unready pods are not evictable`,
      blocker: "permanent",
    };
  }
  const cur = status["currentHealthy"];
  const des = status["desiredHealthy"];
  if (typeof cur === "number" && typeof des === "number" && des > 0 && cur >= des) return undefined;
  return budgetFinding(subject, status);
}

/** Specs that can never allow one eviction of a matched pod. */
function permanentBlock(pdb: KubeObjectLike, status: Record<string, unknown>): string | undefined {
  const spec = (pdb["spec"] ?? {}) as {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
  };
  const mu = spec.maxUnavailable;
  if (mu === 0 || mu === "0%" || mu === "0") return "maxUnavailable is 0";
  const ma = spec.minAvailable;
  if (ma === "100%") return "minAvailable is 100%";
  const expected = status["expectedPods"];
  if (typeof ma === "number" && typeof expected === "number" && expected > 0 && ma >= expected) {
    return `minAvailable ${ma} >= ${expected} expected pods`;
  }
  return undefined;
}

function podReady(p: KubeObjectLike): boolean {
  const conds = statusOf(p)?.["conditions"];
  return Array.isArray(conds) && conds.some((c) => c?.type === "Ready" && c?.status === "True");
}
