/**
 * Every Kubernetes call of cordon, drain and uncordon carries the phase's deadline, and a call
 * that passes it is a transport failure: a write stays unaccounted (`transport-failure`, the step
 * `unresolved`), a read is unreadable (the step held, nothing sent after it). The "server" here
 * is silent: a call with a deadline fails with `KubeTimeout` at that deadline (as the adapter
 * does, test/adapters/kube/call_deadline_test.ts); a call without one never returns, and the
 * test fails instead of hanging.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import type { OperationDetail } from "../../../src/ports/journal.ts";
import type { Kube, KubeCallOptions } from "../../../src/ports/kube.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { within } from "../../_helpers/silent_listener.ts";

const W1 = ["worker-1", "worker-2"];
/** The example plan's transport deadlines (callTimeoutMs is the identity in process). */
const CORDON_MS = 30_000, DRAIN_MS = 600_000, UNCORDON_MS = 30_000;

/** What a silent API server does to a call: times out at its deadline, or never answers. */
function silent<T>(deadlines: number[], opts: KubeCallOptions | undefined): Promise<T> {
  const ms = opts?.timeoutMs;
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return new Promise<T>(() => {});
  deadlines.push(ms);
  return Promise.reject(
    new CairnError({ reason: "KubeTimeout", message: `no answer within ${ms} ms; abandoned` }),
  );
}

/** The world's Kubernetes port as the executor sees it (calls take a deadline). */
function kubeOf(w: InprocWorld): Kube {
  return w.twin.kube;
}

function attempts(d: OperationDetail): string[] {
  return d.attempts.map((a) => `${a.phase}:${a.responseClass}:${a.accountedBy}`);
}

async function worker1(w: InprocWorld): Promise<OperationDetail> {
  const d = (await w.operations()).find((x) => x.operation.machine === "worker-1");
  if (!d) throw new Error("no operation for worker-1");
  return d;
}

async function run(w: InprocWorld) {
  const out = await within(10_000, w.run());
  assertEquals((await w.operations()).length, 1, "the rollout holds at worker-1");
  return out.nodes.map((n) => [n.node, n.state, n.reason]);
}

Deno.test("kube deadline: a cordon patch with no answer is a transport failure, unaccounted; nothing is drained", async () => {
  const w = await startInprocWorld({ nodes: W1 });
  try {
    const seen: number[] = [];
    const cordon = kubeOf(w).cordon.bind(kubeOf(w));
    kubeOf(w).cordon = (node, rv, opts) =>
      node === "worker-1" ? silent(seen, opts) : cordon(node, rv, opts);
    assertEquals(await run(w), [["worker-1", "unresolved", "CordonNotApplied"]]);
    assertEquals(seen, [CORDON_MS]);
    const d = await worker1(w);
    assertEquals(attempts(d).slice(-1), ["cordon:transport-failure:null"]);
    assert(!d.attempts.some((a) => a.phase === "drain" || a.phase === "reboot"));
    assertEquals(w.twin.kube.stats.byVerb["evict"] ?? 0, 0);
  } finally {
    await w.close();
  }
});

Deno.test("kube deadline: the node read before the cordon with no answer is unreadable; no cordon is sent", async () => {
  const w = await startInprocWorld({ nodes: W1 });
  try {
    const seen: number[] = [];
    // Armed once worker-1's install is answered (Talos calls go to its address; it is the first
    // node): the next read of worker-1 is the cordon phase's.
    let armed = false, installs = 0;
    const upgrade = w.twin.talos.upgrade.bind(w.twin.talos);
    w.twin.talos.upgrade = async (...args: Parameters<typeof upgrade>) => {
      const r = await upgrade(...args);
      if (installs++ === 0) armed = true;
      return r;
    };
    const getNode = kubeOf(w).getNode.bind(kubeOf(w));
    kubeOf(w).getNode = (name, opts) => {
      if (!armed || name !== "worker-1") return getNode(name, opts);
      armed = false;
      return silent(seen, opts);
    };
    assertEquals(await run(w), [["worker-1", "unresolved", "NodeUnreadable"]]);
    assertEquals(seen, [CORDON_MS]);
    const d = await worker1(w);
    assert(!d.attempts.some((a) => a.phase === "cordon"), attempts(d).join(" "));
    assertEquals(w.twin.kube.stats.byVerb["patch"] ?? 0, 0);
  } finally {
    await w.close();
  }
});

Deno.test("kube deadline: the pod list for drain planning with no answer is unreadable; nothing is evicted", async () => {
  const w = await startInprocWorld({ nodes: W1 });
  try {
    const seen: number[] = [];
    let armed = false;
    const cordon = kubeOf(w).cordon.bind(kubeOf(w));
    kubeOf(w).cordon = async (node, rv, opts) => {
      const r = await cordon(node, rv, opts);
      if (node === "worker-1") armed = true;
      return r;
    };
    const listPods = kubeOf(w).listPods.bind(kubeOf(w));
    kubeOf(w).listPods = (onNode, opts) => {
      if (!armed || onNode !== "worker-1") return listPods(onNode, opts);
      armed = false;
      return silent(seen, opts);
    };
    assertEquals(await run(w), [["worker-1", "unresolved", "PodsUnreadable"]]);
    assertEquals(seen, [DRAIN_MS]);
    const d = await worker1(w);
    assert(!d.attempts.some((a) => a.phase === "drain"), attempts(d).join(" "));
    assertEquals(w.twin.kube.stats.byVerb["evict"] ?? 0, 0);
  } finally {
    await w.close();
  }
});

Deno.test("kube deadline: an eviction with no answer makes the drain attempt a transport failure; no reboot", async () => {
  const w = await startInprocWorld({ nodes: W1 });
  try {
    const seen: number[] = [];
    kubeOf(w).evict = (_pod, opts) => silent(seen, opts);
    assertEquals(await run(w), [["worker-1", "unresolved", "DrainIncomplete"]]);
    assertEquals(seen, [DRAIN_MS]);
    const d = await worker1(w);
    assertEquals(attempts(d).slice(-1), ["drain:transport-failure:null"]);
    assertEquals(w.twin.talos.stats.mutating["MachineService/Reboot"] ?? 0, 0);
  } finally {
    await w.close();
  }
});

Deno.test("kube deadline: an uncordon patch with no answer is a transport failure, unaccounted", async () => {
  const w = await startInprocWorld({ nodes: W1 });
  try {
    const seen: number[] = [];
    const uncordon = kubeOf(w).uncordon.bind(kubeOf(w));
    kubeOf(w).uncordon = (node, rv, opts) =>
      node === "worker-1" ? silent(seen, opts) : uncordon(node, rv, opts);
    assertEquals(await run(w), [["worker-1", "unresolved", "UncordonNotApplied"]]);
    assertEquals(seen, [UNCORDON_MS]);
    const d = await worker1(w);
    assertEquals(attempts(d).slice(-1), ["uncordon:transport-failure:null"]);
    assert(d.operation.state !== "completed");
  } finally {
    await w.close();
  }
});
