/**
 * The executor's node step under faults, against the twin's own models in process and a
 * libSQL `:memory:` journal: lost responses, a budget that tightens mid-drain, refused and
 * failed installs, a failing post-gate, someone else's cordon, a controller that dies mid-step.
 * The same classifications the twin-backed scenarios assert, at in-memory speed.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { OperationDetail } from "../../../src/ports/journal.ts";
import type { Obj } from "../../../src/sim/kube/store.ts";
import { recordUpdate } from "../../../src/sim/kube/ssa.ts";
import { homeOps, type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { assertIntentAttemptResponse } from "../../_helpers/journal_order.ts";

const W1 = ["worker-1", "worker-2"];

function attempts(d: OperationDetail): string[] {
  return d.attempts.map((a) => `${a.phase}:${a.responseClass}:${a.accountedBy}`);
}

function facts(d: OperationDetail, phase: string): Array<Record<string, unknown>> {
  return d.phases.filter((p) => p.phase === phase && p.kind === "fact")
    .map((p) => JSON.parse(p.detail) as Record<string, unknown>);
}

async function operationOf(w: InprocWorld, node: string): Promise<OperationDetail> {
  const d = (await w.operations()).find((x) => x.operation.machine === node);
  if (!d) throw new Error(`no operation for ${node}`);
  return d;
}

/** Mutations the models received: Talos mutating calls and Kubernetes writes by verb. */
function sent(w: InprocWorld) {
  const m = w.twin.talos.stats.mutating;
  return {
    pull: m["ImageService/Pull"] ?? 0,
    install: m["LifecycleService/Upgrade"] ?? 0,
    reboot: m["MachineService/Reboot"] ?? 0,
    patch: w.twin.kube.stats.byVerb["patch"] ?? 0,
    evict: w.twin.kube.stats.byVerb["evict"] ?? 0,
  };
}

/** A 300 s verification window keeps a test fast; no classification here depends on its length. */
function shortVerify(text: string): string {
  const long = "verify: { transportSeconds: 60, verificationSeconds: 1200 }";
  if (!text.includes(long)) throw new Error("the plan's verify deadline moved");
  return text.replace(long, "verify: { transportSeconds: 60, verificationSeconds: 300 }");
}

/** Calls `fn` once, the first time `worker-1` is seen with `spec.unschedulable` as `cordoned`. */
function onWorker1(w: InprocWorld, cordoned: boolean, fn: () => void, after?: () => boolean) {
  let done = false;
  w.twin.store.watch(w.twin.controllers.nodes, (e) => {
    const unschedulable = (e.object.spec as { unschedulable?: boolean } | undefined)
      ?.unschedulable === true;
    if (done || e.object.metadata.name !== "worker-1" || unschedulable !== cordoned) return;
    if (after && !after()) return;
    done = true;
    fn();
  });
}

Deno.test("node step (in process): a lost reboot response is unresolved, never completed, even once the node runs the target", async () => {
  const w = await startInprocWorld({
    nodes: W1,
    faults: [{ kind: "lose-response", point: "talos.Reboot", target: "worker-1" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "RebootResponseLost"],
    ]);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d).slice(-1), ["reboot:lost:null"]);
    // The reboot landed: the node comes back at the target version…
    await w.twin.time.advanceTo(w.twin.clock.now() + 900_000);
    const n = w.twin.cluster.nodes.get("worker-1")!;
    assertEquals([n.stage, n.runningVersion], ["running", "v1.14.2"]);
    // …and nothing completes it or moves on: the lost request is not accounted.
    const again = await w.run();
    assertEquals([again.state, again.nodes.map((x) => x.reason)], ["halted", ["OperationExists"]]);
    assertEquals((await operationOf(w, "worker-1")).operation.state, "unresolved");
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 1, patch: 1, evict: sent(w).evict });
    assert(!(await w.journal.listOperations()).some((o) => o.machine === "worker-2"));
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a budget that tightens mid-drain holds the step unresolved, the PDB named, the node left cordoned", async () => {
  // A 300 s drain bound (the longest grace on worker-1) keeps the test fast.
  const w = await startInprocWorld({
    nodes: W1,
    editPlan: (t) => t.replace("drainTimeoutSeconds: 600", "drainTimeoutSeconds: 300"),
  });
  try {
    const pdbs = w.twin.controllers.pdbs;
    // Right after cairn's cordon, an operator tightens echo's budget: both replicas must stay.
    onWorker1(w, true, () => {
      const echo = w.twin.store.get(pdbs, "network", "echo")!;
      w.twin.store.put(pdbs, { ...echo, spec: { ...(echo.spec as object), minAvailable: 2 } });
    });
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "DrainIncomplete"],
    ]);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), [
      "pull:accepted:response",
      "install:accepted:response",
      "cordon:accepted:response",
      "drain:target-error:response",
    ]);
    assertIntentAttemptResponse(d);
    const blocked = facts(d, "drain").filter((f) =>
      f["outcome"] === "blocked" && String(f["evict"]).startsWith("network/echo-")
    );
    assert(blocked.length > 10, "the refused eviction was retried, never forced");
    assert(
      blocked.every((f) => /disruption budget echo /.test(String(f["message"]))),
      "every refusal names the budget",
    );
    const bound = facts(d, "drain").find((f) => f["boundReached"] === true)!;
    assertEquals((bound["remaining"] as Array<{ pod: string }>).map((r) => r.pod.split("-")[0]), [
      "network/echo",
    ]);
    assertEquals((await w.twin.kube.getNode("worker-1"))?.unschedulable, true);
    assertEquals([sent(w).install, sent(w).reboot], [1, 0]);
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): an install refused by validation is rejected before any response; nothing is written and nothing follows", async () => {
  // The machine refuses the install request as invalid (INVALID_ARGUMENT) before writing anything.
  const w = await startInprocWorld({
    nodes: W1,
    faults: [{ kind: "install-invalid", point: "talos.install", target: "worker-1" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "InstallRefused"],
    ]);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), ["pull:accepted:response", "install:rejected-pre-mutation:response"]);
    assert(out.nodes[0]!.detail.includes("TalosInvalidArgument"), out.nodes[0]!.detail);
    const n = w.twin.cluster.nodes.get("worker-1")!;
    assertEquals([n.installsSinceBoot, n.defaultEntry?.version, n.fallbackEntry], [
      0,
      "v1.13.9",
      undefined,
    ]);
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 0, patch: 0, evict: 0 });
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a pull refused by validation settles the operation rejected, and the step says so", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  const real = twin.talos;
  // The machine refuses the pull's request as invalid (InvalidArgument) before doing anything.
  Object.defineProperty(twin, "talos", {
    value: new Proxy(real, {
      get(t, k) {
        if (k === "pull") {
          return (node: string) =>
            Promise.resolve({
              outcome: "rejected",
              reason: "TalosInvalidArgument",
              grpcCode: 3,
              message: "cannot parse image reference",
              node,
              method: "/machine.ImageService/Pull",
            });
        }
        const v = Reflect.get(t, k, t);
        return typeof v === "function" ? v.bind(t) : v;
      },
    }),
  });
  const w = await startInprocWorld({ nodes: W1, twin });
  try {
    const out = await w.run();
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), ["pull:rejected-pre-mutation:response"]);
    assertEquals(d.operation.state, "rejected");
    // The outcome is the journal's state, never `unresolved` beside a terminal record.
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [["worker-1", "rejected"]]);
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): an install refused because another holds the lock is the target's answer, not a pre-mutation rejection", async () => {
  // FAILED_PRECONDITION is a refusal before acting, but only validation proves nothing happened.
  const w = await startInprocWorld({
    nodes: W1,
    faults: [{ kind: "install-lock-held", point: "talos.install", target: "worker-1" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["unresolved", "InstallRefused"]]);
    assert(out.nodes[0]!.detail.includes("TalosPreconditionFailed"), out.nodes[0]!.detail);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), ["pull:accepted:response", "install:target-error:response"]);
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 0, patch: 0, evict: 0 });
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): an install cut after its first line is lost, not rejected; exactly one install", async () => {
  const w = await startInprocWorld({
    nodes: W1,
    faults: [{
      kind: "lose-response",
      point: "talos.LifecycleService.Upgrade",
      target: "worker-1",
    }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [[
      "unresolved",
      "InstallResponseLost",
    ]]);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), ["pull:accepted:response", "install:lost:null"]);
    assert(w.twin.cluster.nodes.get("worker-1")!.isLocked(), "the installer still runs");
    await w.twin.time.advanceTo(w.twin.clock.now() + 900_000);
    await w.run();
    const n = w.twin.cluster.nodes.get("worker-1")!;
    assertEquals([n.installsSinceBoot, n.runningVersion, n.fallbackEntry?.version], [
      1,
      "v1.13.9",
      "v1.13.9",
    ]);
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 0, patch: 0, evict: 0 });
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): an installer that exits non-zero is the target's answer: failed on a contradicting observation, never retried", async () => {
  const w = await startInprocWorld({
    nodes: W1,
    faults: [{ kind: "install-fails", point: "talos.install", target: "worker-1" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["failed", "InstallFailed"]]);
    const d = await operationOf(w, "worker-1");
    assertEquals(attempts(d), ["pull:accepted:response", "install:target-error:response"]);
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 0, patch: 0, evict: 0 });
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a post-gate that keeps failing after the uncordon does not complete the node", async () => {
  const w = await startInprocWorld({ nodes: W1, editPlan: shortVerify });
  try {
    // Once cairn has uncordoned worker-1, Ceph degrades cluster-wide and stays degraded.
    let cordoned = false;
    onWorker1(w, true, () => (cordoned = true));
    onWorker1(w, false, () => {
      const t = w.twin.store.findType("ceph.rook.io", "v1", "cephclusters")!;
      const cc = w.twin.store.get(t, "rook-ceph", "rook-ceph")!;
      const status = cc.status as { ceph: Record<string, unknown> };
      w.twin.store.put(t, {
        ...cc,
        status: { ...status, ceph: { ...status.ceph, health: "HEALTH_ERR" } },
      });
    }, () => cordoned);
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "failed", "PostconditionContradicted"],
    ]);
    assert(out.nodes[0]!.detail.includes("health=fail"), out.nodes[0]!.detail);
    const d = await operationOf(w, "worker-1");
    assertEquals(d.operation.state, "failed");
    assert(d.attempts.every((a) => a.accountedBy === "response" && a.responseClass === "accepted"));
    const postGates = d.events.filter((e) => e.kind === "health-round")
      .map((e) => JSON.parse(e.body) as { purpose: string; verdict: string })
      .filter((r) => r.purpose === "post-gate");
    assert(postGates.length > 1 && postGates.every((r) => r.verdict !== "pass"));
    assertEquals(out.state, "halted");
    assert(!(await w.journal.listOperations()).some((o) => o.machine === "worker-2"));
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a node someone else cordoned after the gate is never uncordoned by cairn", async () => {
  let attemptsCommitted = 0;
  // Once the install attempt is durable (the gate passed long before), an operator runs
  // `kubectl cordon worker-1`: the cordon is theirs, not the operation's.
  const w: InprocWorld = await startInprocWorld({
    nodes: W1,
    editPlan: shortVerify,
    writePoint: (name) => {
      if (name === "attempt:after-commit" && ++attemptsCommitted === 2) {
        const { store, controllers, clock } = w.twin;
        const cur = store.get(controllers.nodes, undefined, "worker-1")!;
        const patch = { spec: { unschedulable: true } };
        const next = { ...cur, spec: { ...(cur.spec as object), unschedulable: true } } as Obj;
        recordUpdate(next, cur, patch, "kubectl", controllers.nodes, clock.now());
        store.put(controllers.nodes, next);
      }
      return Promise.resolve();
    },
  });
  try {
    const out = await w.run();
    const d = await operationOf(w, "worker-1");
    assertEquals(facts(d, "cordon")[0]?.["cordonedByOperation"], false);
    assert(!d.attempts.some((a) => a.phase === "cordon" || a.phase === "uncordon"));
    assert(!d.phases.some((p) => p.phase === "uncordon" && p.kind === "intent"));
    assertEquals((await w.twin.kube.getNode("worker-1"))?.unschedulable, true);
    assertEquals(sent(w).patch, 0, "cairn wrote neither a cordon nor an uncordon");
    // Verification reads a cordon the operation does not own as a failing node: the step ends
    // on that evidence with the node upgraded and the operator's cordon in place.
    assertEquals([out.nodes[0]!.state, out.nodes[0]!.reason], [
      "failed",
      "VerificationHealthFailed",
    ]);
    assert(out.nodes[0]!.detail.startsWith("NodeCordoned"), out.nodes[0]!.detail);
    assertEquals(w.twin.cluster.nodes.get("worker-1")!.runningVersion, "v1.14.2");
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a controller that dies mid-step is taken over by its successor; no second install", async () => {
  let attemptsCommitted = 0;
  let frozen = false;
  const w = await startInprocWorld({
    nodes: W1,
    // The first controller dies right after its cordon attempt became durable (before sending).
    writePoint: (name) => {
      if (name !== "attempt:after-commit" || frozen) return Promise.resolve();
      if (++attemptsCommitted < 3) return Promise.resolve();
      frozen = true;
      return new Promise<void>(() => {});
    },
  });
  try {
    void w.run({ owner: "ctl_a" });
    // The first controller moves virtual time itself; only let the event loop turn until it dies.
    while (!frozen) await new Promise((r) => setTimeout(r, 0));
    const dying = await operationOf(w, "worker-1");
    assertEquals([dying.operation.owner, dying.attempts.map((a) => a.phase)], [
      "ctl_a",
      ["pull", "install", "cordon"],
    ]);
    const out = await w.run({ owner: "ctl_b" });
    assertEquals([out.state, out.nodes.map((n) => [n.node, n.state, n.reason])], [
      "halted",
      [["worker-1", "unresolved", "ResumeUndecided"]],
    ]);
    const d = await operationOf(w, "worker-1");
    assertEquals([d.operation.state, d.operation.owner], ["unresolved", "ctl_b"]);
    const owners = d.events.filter((e) => e.kind === "ownership").map((e) => JSON.parse(e.body));
    assertEquals(owners.map((b) => [b.stateBefore, b.stateAfter]), [["sending", "unresolved"]]);
    assertEquals(attempts(d), [
      "pull:accepted:response",
      "install:accepted:response",
      "cordon:null:null",
    ]);
    assertEquals(sent(w), { pull: 1, install: 1, reboot: 0, patch: 0, evict: 0 });
  } finally {
    await w.close();
  }
});
