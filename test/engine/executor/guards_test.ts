/**
 * The executor's classification and accounting guards, in process (`sim/inproc`, libSQL
 * `:memory:`): each test fails when its guard is removed (tools/mutants/journal.json names the
 * mutants). The executor honours a "leave the cordon" decision; a cluster-level health failure
 * that appears only after the node's own verification keeps the operation from `completed` and
 * holds the rollout (the post-gate round); a completion read ordered before the last accounting
 * never completes; an unreadable completion read never fails an operation.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { Journal } from "../../../src/ports/journal.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { InprocKube } from "../../../src/sim/inproc/kube.ts";
import { unschedulableOwners } from "../../../src/engine/cordon_ownership.ts";
import { NODES } from "../../../src/engine/executor/kube_phases.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { phaseRecords } from "../../_helpers/scenario_world.ts";

const TWO = ["worker-1", "worker-2"];

/** Another client of the same cluster writing as `kubectl` (another field manager). */
function kubectl(w: InprocWorld): InprocKube {
  return new InprocKube({
    store: w.twin.store,
    controllers: w.twin.controllers,
    time: w.twin.time,
    faults: new FaultSchedule(),
    kubernetesVersion: "v1.35.2",
    fieldManager: "kubectl",
  });
}

/** What Talos calls for `node` are addressed to: its name or the plan's declared address. */
function talosTargets(w: InprocWorld, node: string): string[] {
  const n = w.bound.plan.spec.nodes.find((x) => x.name === node)!;
  return [node, ...(n.address ? [n.address] : [])];
}

async function operationOf(w: InprocWorld, node: string) {
  return (await w.operations()).find((d) => d.operation.machine === node);
}

Deno.test("executor: a cordon whose ownership changed is left in place, never uncordoned", async () => {
  const w = await startInprocWorld({ nodes: TWO });
  try {
    // Right after cairn's cordon lands, an operator re-cordons the node with kubectl (uncordon,
    // cordon): spec.unschedulable is now theirs, not the operation's.
    const other = kubectl(w);
    const cordon = w.twin.kube.cordon.bind(w.twin.kube);
    w.twin.kube.cordon = async (node, rv) => {
      const r = await cordon(node, rv);
      if (r.kind === "applied" && node === "worker-1") {
        const off = await other.uncordon(node, r.resourceVersion);
        assert(off.kind === "applied");
        assert((await other.cordon(node, off.resourceVersion)).kind === "applied");
      }
      return r;
    };
    const out = await w.run();
    assertEquals(out.state, "halted");
    const d = (await operationOf(w, "worker-1"))!;
    assert(d.attempts.every((a) => a.phase !== "uncordon"), "no uncordon was attempted");
    const left = phaseRecords(d, "uncordon", "fact");
    assertEquals(left.map((f) => [f["decision"], f["reason"]]), [
      ["leave", "CordonOwnershipChanged"],
    ]);
    const node = (await w.twin.kube.getObject(NODES, "worker-1"))!;
    assertEquals((node["spec"] as { unschedulable?: boolean }).unschedulable, true);
    assertEquals(unschedulableOwners(node), ["kubectl"]);
    assertEquals(w.twin.kube.stats.byVerb["patch"], 1, "cairn wrote only its own cordon");
    assert(d.operation.state !== "completed");
    assertEquals(await operationOf(w, "worker-2"), undefined, "the rollout is held");
  } finally {
    await w.close();
  }
});

Deno.test("executor: a node cordoned by someone else after the gate is recorded as not ours and never uncordoned", async () => {
  const w = await startInprocWorld({ nodes: TWO });
  try {
    // Between the gate and the cordon phase (while the image is pulled), an operator cordons.
    const other = kubectl(w);
    const pull = w.twin.talos.pull.bind(w.twin.talos);
    const targets = talosTargets(w, "worker-1");
    w.twin.talos.pull = async (...args: Parameters<typeof pull>) => {
      const r = await pull(...args);
      if (targets.includes(args[0])) {
        const n = (await other.getNode("worker-1"))!;
        assert((await other.cordon("worker-1", n.resourceVersion)).kind === "applied");
      }
      return r;
    };
    const out = await w.run();
    assertEquals(out.state, "halted");
    const d = (await operationOf(w, "worker-1"))!;
    assertEquals(phaseRecords(d, "cordon", "fact").map((f) => f["priorUnschedulable"]), [true]);
    assert(d.attempts.every((a) => a.phase !== "cordon" && a.phase !== "uncordon"));
    assertEquals(w.twin.kube.stats.byVerb["patch"] ?? 0, 0, "cairn wrote no cordon of its own");
    const node = (await w.twin.kube.getObject(NODES, "worker-1"))!;
    assertEquals((node["spec"] as { unschedulable?: boolean }).unschedulable, true);
    assertEquals(unschedulableOwners(node), ["kubectl"]);
    assertEquals(await operationOf(w, "worker-2"), undefined, "the rollout is held");
  } finally {
    await w.close();
  }
});

Deno.test("executor: a cluster health failure appearing after the node's own verification holds the rollout (post-gate)", async () => {
  const w = await startInprocWorld({ nodes: TWO });
  try {
    // The node verifies on its own readers, is uncordoned, and only then does Ceph degrade: only
    // the post-gate round, on the full policy, can see it.
    const uncordon = w.twin.kube.uncordon.bind(w.twin.kube);
    w.twin.kube.uncordon = async (node, rv) => {
      const r = await uncordon(node, rv);
      const t = w.twin.store.typeOfKind("ceph.rook.io/v1", "CephCluster")!;
      const ceph = structuredClone(w.twin.store.get(t, "rook-ceph", "rook-ceph")!);
      (ceph["status"] as { ceph: { health: string } }).ceph.health = "HEALTH_WARN";
      w.twin.store.put(t, ceph);
      return r;
    };
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [["worker-1", "failed"]]);
    const d = (await operationOf(w, "worker-1"))!;
    assertEquals(d.operation.state, "failed");
    const rounds = d.events.filter((e) => e.kind === "health-round").map((e) =>
      JSON.parse(e.body) as { purpose: string; verdict: string }
    );
    assert(rounds.some((r) => r.purpose === "verify" && r.verdict === "pass"));
    const post = rounds.filter((r) => r.purpose === "post-gate");
    assert(post.length > 0 && post.every((r) => r.verdict === "fail"), JSON.stringify(post));
    assertEquals(await operationOf(w, "worker-2"), undefined, "worker-2 is never committed");
    assertEquals(w.twin.cluster.nodes.get("worker-2")!.installsSinceBoot, 0);
  } finally {
    await w.close();
  }
});

/**
 * A journal whose completion read (the first read started once the operation is `verifying`)
 * gets a basis allocated before the last accounting, as a read started too early would.
 */
function earlyCompletionBasis(j: Journal): Journal {
  let early: number | undefined;
  let verifying = false;
  const startObservation: Journal["startObservation"] = async (machine, actor, nowMs) => {
    const basis = await j.startObservation(machine, actor, nowMs);
    early ??= basis;
    return verifying ? early : basis;
  };
  const transition: Journal["transition"] = async (input) => {
    const r = await j.transition(input);
    if (input.to === "verifying") verifying = true;
    return r;
  };
  return new Proxy(j, {
    get(target, prop) {
      if (prop === "startObservation") return startObservation;
      if (prop === "transition") return transition;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

Deno.test("executor: a completion read ordered before the last accounting never completes; the operation stays unresolved", async () => {
  const raw = await openJournal({ url: ":memory:", ids: counterIds("g"), nowMs: 0 });
  const w = await startInprocWorld({ nodes: TWO, journal: earlyCompletionBasis(raw) });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "ClassificationRefused"],
    ]);
    const d = (await operationOf(w, "worker-1"))!;
    assertEquals(d.operation.state, "unresolved");
    assert(d.attempts.every((a) => a.accountedBy === "response"));
    assertEquals(await operationOf(w, "worker-2"), undefined, "the rollout is held");
  } finally {
    await w.close();
    await raw.close();
  }
});

Deno.test("executor: a node that booted the old version but cannot be read at completion stays unresolved, never failed", async () => {
  const w = await startInprocWorld({
    nodes: TWO,
    faults: [{ kind: "boots-old-version", point: "talos.boot", target: "worker-1" }],
  });
  try {
    // Once the boot is observed, the node's version can no longer be read.
    const version = w.twin.talos.version.bind(w.twin.talos);
    const targets = talosTargets(w, "worker-1");
    let booted = false;
    const recordPhase = w.journal.recordPhase.bind(w.journal);
    w.twin.talos.version = (node, opts) =>
      booted && targets.includes(node)
        ? Promise.reject(new Error("apid unreachable"))
        : version(node, opts);
    (w.journal as { recordPhase: Journal["recordPhase"] }).recordPhase = async (input) => {
      await recordPhase(input);
      if (input.phase === "boot-observed") booted = true;
    };
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "BootedOtherVersion"],
    ]);
    const d = (await operationOf(w, "worker-1"))!;
    assertEquals(d.operation.state, "unresolved");
    const completion = d.events.filter((e) =>
      e.kind === "observation" && e.body.includes('"purpose":"completion"')
    );
    assertEquals(completion.length, 1);
    assert(completion[0]!.body.includes('"postcondition":"unreadable"'), completion[0]!.body);
  } finally {
    await w.close();
  }
});
