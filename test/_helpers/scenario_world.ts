/**
 * Recovery-table scenarios (docs/recovery.md#the-recovery-table) on the twin through the same
 * harness as `cairn rehearse`: one twin per scenario, a cut-down plan, named faults aimed at one
 * node, an in-memory journal, and helpers to read what the journal and both simulators saw.
 */
import { join } from "node:path";
import { parseDocument } from "yaml";
import { type Rehearsal, startRehearsal } from "../../src/app/rehearsal.ts";
import { TEST_PKI_CACHE } from "../../src/app/twin_process.ts";
import type { FaultPresetName } from "../../src/sim/fault_presets.ts";
import type { Fault } from "../../src/sim/faults.ts";
import type { OperationDetail } from "../../src/ports/journal.ts";
import { MemoryLogger } from "./memory_logger.ts";
import { ROOT } from "./twin_world.ts";

export interface ScenarioOptions {
  readonly nodes?: readonly string[];
  readonly faults?: readonly FaultPresetName[];
  readonly faultNode?: string;
  readonly extraFaults?: readonly Fault[];
  /** Raw faults armed right after the fault node's commitment. */
  readonly afterCommitFaults?: readonly Fault[];
  /** Further edits of the plan document (after the node cut). */
  readonly edit?: (doc: ReturnType<typeof parseDocument>) => void;
}

export interface Scenario extends Rehearsal {
  readonly log: MemoryLogger;
}

/** Keeps only `nodes` (in plan order) and applies `edit`; comments survive. */
export function editPlanText(
  text: string,
  nodes: readonly string[] | undefined,
  edit?: ScenarioOptions["edit"],
): string {
  const doc = parseDocument(text);
  if (nodes) {
    const all = doc.getIn(["spec", "nodes"]) as { items: Array<{ get(k: string): unknown }> };
    all.items = all.items.filter((n) => nodes.includes(String(n.get("name"))));
  }
  edit?.(doc);
  return doc.toString();
}

export async function startScenario(o: ScenarioOptions = {}): Promise<Scenario> {
  const planPath = join(ROOT, "plans/talos-v1.14.2.yaml");
  const text = editPlanText(await Deno.readTextFile(planPath), o.nodes ?? ["worker-1"], o.edit);
  const log = new MemoryLogger();
  const r = await startRehearsal({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    planPath,
    planBytes: new TextEncoder().encode(text),
    faults: o.faults ?? [],
    ...(o.faultNode ? { faultNode: o.faultNode } : {}),
    ...(o.extraFaults ? { extraFaults: o.extraFaults } : {}),
    ...(o.afterCommitFaults ? { afterCommitFaults: o.afterCommitFaults } : {}),
    journalUrl: ":memory:",
    log,
    owner: "ctl_test",
    pkiCacheDir: TEST_PKI_CACHE,
  });
  return Object.assign(r, { log });
}

/** The operation of `node`, fully. */
export async function operationOf(s: Rehearsal, node: string): Promise<OperationDetail> {
  const op = (await s.journal.listOperations()).find((o) => o.machine === node);
  if (!op) throw new Error(`no operation for ${node}`);
  return (await s.journal.showOperation(op.id))!;
}

/** Phase records of one phase, details parsed. */
export function phaseRecords(
  d: OperationDetail,
  phase: string,
  kind?: "intent" | "fact",
): Array<Record<string, unknown>> {
  return d.phases.filter((p) => p.phase === phase && (kind === undefined || p.kind === kind))
    .map((p) => JSON.parse(p.detail) as Record<string, unknown>);
}

/** Talos mutating calls by method suffix (e.g. `LifecycleService/Upgrade`) and kube writes. */
export async function sent(s: Rehearsal) {
  const st = await s.control.stats();
  const m = st.talos.mutating;
  const count = (suffix: string) =>
    Object.entries(m).filter(([k]) => k.endsWith(suffix)).reduce((a, [, v]) => a + v, 0);
  const kube = st.kube as { mutating: number; byVerb: Record<string, number> } | null;
  return {
    talosMutating: st.talos.totalMutating,
    kubeMutating: kube?.mutating ?? 0,
    install: count("LifecycleService/Upgrade"),
    pull: count("ImageService/Pull"),
    reboot: count("MachineService/Reboot"),
    kubeByVerb: kube?.byVerb ?? {},
  };
}
