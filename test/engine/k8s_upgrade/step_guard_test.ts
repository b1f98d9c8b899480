/**
 * Guards of one KubernetesUpgrade component step (src/engine/k8s_upgrade/step.ts) pinned on the
 * in-process twin: nothing is committed while the health gate fails or once the dispatch check no
 * longer passes, nor for a component someone else already moved to the target; a new image is
 * named in the configuration only after its pre-pull was accepted; a whole-document apply is never
 * based on a configuration read older than this plan's earlier change (config_floor.ts), and a
 * component completes only when its post-gate passed too.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import {
  counterIdSource,
  inprocCluster,
  inprocExecutionTiming,
} from "../../../src/app/inproc_rollout.ts";
import {
  componentImage,
  retag,
  withComponentImage,
} from "../../../src/domain/k8s_upgrade/machine_config.ts";
import type { ExecutionObserver } from "../../../src/engine/executor/deps.ts";
import { configVersionFloor } from "../../../src/engine/k8s_upgrade/config_floor.ts";
import {
  bindKubernetesUpgrade,
  executeKubernetesUpgrade,
} from "../../../src/engine/k8s_upgrade/run.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { Kube } from "../../../src/ports/kube.ts";
import type { CosiResource, Talos } from "../../../src/ports/talos.ts";
import type { InprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { InprocKube } from "../../../src/sim/inproc/kube.ts";
import { K8S_PLAN_PATH, k8sPlan, k8sTwin } from "../../_helpers/k8s_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const MACHINE_CONFIG = {
  namespace: "config",
  type: "MachineConfigs.config.talos.dev",
  id: "v1alpha1",
} as const;
const CP1 = "10.5.0.3";

/** The example plan on the twin, with the Talos port and the bound files replaceable. */
async function world(
  o: {
    talos?: (t: Talos) => Talos;
    kube?: (k: Kube) => Kube;
    files?: (f: BoundFileSource) => BoundFileSource;
    before?: (twin: InprocTwin) => Promise<void>;
    observer?: (twin: InprocTwin) => ExecutionObserver;
  } = {},
) {
  const twin = await k8sTwin();
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIdSource(),
    nowMs: twin.clock.now(),
  });
  try {
    await o.before?.(twin);
    const { parsed, bytes } = await k8sPlan();
    const bound = await bindKubernetesUpgrade(journal, {
      parsed,
      bytes,
      signatures: "",
      firstSeenCommit: "inproc",
      approver: { identity: "inproc-approver", role: "approver" },
      nowMs: twin.clock.now(),
    });
    const cluster = inprocCluster(twin);
    const files = workingTreeBoundFiles(K8S_PLAN_PATH);
    const out = await executeKubernetesUpgrade({
      journal,
      bound,
      cluster: {
        kube: o.kube ? o.kube(cluster.kube) : cluster.kube,
        talos: o.talos ? o.talos(cluster.talos) : cluster.talos,
      },
      authority: {
        bytes,
        signatures: "",
        requiredApprovals: 1,
        files: o.files ? o.files(files) : files,
      },
      ...inprocExecutionTiming(twin),
      log: new MemoryLogger(),
      owner: "ctl_test",
      ...(o.observer ? { observer: o.observer(twin) } : {}),
    });
    return { twin, journal, out };
  } catch (e) {
    twin.stop();
    await journal.close();
    throw e;
  }
}

async function close(w: { twin: InprocTwin; journal: Journal }) {
  w.twin.stop();
  await w.journal.close();
}

/** Another client of the cluster writing under its own field manager (an operator). */
function operator(twin: InprocTwin): InprocKube {
  return new InprocKube({
    store: twin.store,
    controllers: twin.controllers,
    time: twin.time,
    faults: twin.faults,
    kubernetesVersion: "v1.35.2",
    fieldManager: "kubectl-cordon",
  });
}

async function cordon(twin: InprocTwin, node: string): Promise<void> {
  const k = operator(twin);
  const n = await k.getNode(node);
  assertEquals((await k.cordon(node, n!.resourceVersion)).kind, "applied");
}

async function configOf(twin: InprocTwin, address: string): Promise<CosiResource> {
  return await twin.talos.resource(address, MACHINE_CONFIG, { timeoutMs: 10_000 });
}

/** `port` with one method replaced (the rest bound to the port itself). */
function replacing<T extends object>(port: T, name: keyof T, fn: unknown): T {
  return new Proxy(port, {
    get(target, p) {
      if (p === name) return fn;
      const v = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** `talos` with `resource` replaced for the machine configuration of cp-1. */
function withConfigRead(
  talos: Talos,
  read: (fresh: () => Promise<CosiResource>) => Promise<CosiResource>,
): Talos {
  return replacing(talos, "resource", (...a: Parameters<Talos["resource"]>) => {
    const [node, ref] = a;
    const fresh = () => talos.resource(...a);
    return node === CP1 && ref.type === MACHINE_CONFIG.type && ref.id === MACHINE_CONFIG.id
      ? read(fresh)
      : fresh();
  });
}

Deno.test("a failing health gate commits no component step: nothing is sent", async () => {
  // An operator keeps worker-4 cordoned: the nodes-ready binding fails every round.
  const w = await world({ before: (twin) => cordon(twin, "worker-4") });
  try {
    assertEquals(w.out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "not-committed", "GateFailed"],
    ]);
    assertEquals(await w.journal.listOperations(), []);
    assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a bound file changed mid-run stops the next component step before its commitment", async () => {
  let changed = false;
  const w = await world({
    files: (real) => ({
      describe: () => real.describe(),
      read: async (p) => {
        const r = await real.read(p);
        if (!changed || p !== "policies/home-ops-kubernetes.yaml" || r.status !== "read") return r;
        const text = new TextDecoder().decode(r.bytes) + "# edited after the approval\n";
        return { status: "read", bytes: new TextEncoder().encode(text) };
      },
    }),
    observer: () => ({
      onAttemptResponse: (a) => {
        if (a.phase === "component-config") changed = true;
      },
    }),
  });
  try {
    assertEquals(w.out.nodes.map((n) => [n.node, n.state]), [
      ["cp-1", "completed"],
      ["cp-2", "not-committed"],
    ]);
    assertEquals((await w.journal.listOperations()).length, 1);
    // cp-1's pull and configuration change, nothing after.
    assertEquals(w.twin.talos.stats.totalMutating, 2);
  } finally {
    await close(w);
  }
});

Deno.test("a configuration that already names the target is not committed, never claimed as cairn's completed step", async () => {
  // Someone else's change: cp-1's machine configuration already names the new apiserver.
  const w = await world({
    talos: (t) =>
      withConfigRead(t, async (fresh) => {
        const r = await fresh();
        const image = componentImage(r.yamlSpec, "kube-apiserver")!;
        return {
          ...r,
          yamlSpec: withComponentImage(r.yamlSpec, "kube-apiserver", retag(image, "v1.36.0"))!,
        };
      }),
  });
  try {
    assertEquals(w.out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "not-committed", "TargetReachedOutOfBand"],
    ]);
    assertEquals(await w.journal.listOperations(), []);
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a pre-pull the node refused holds the step: the configuration never names an image that is not there", async () => {
  // The registry does not hold the new image: containerd answers NOT_FOUND, an accounted answer.
  const w = await world({
    talos: (t) =>
      replacing(t, "pull", (...a: Parameters<Talos["pull"]>) =>
        a[0] === CP1
          ? Promise.resolve({
            outcome: "rejected",
            reason: "TalosNotFound",
            grpcCode: 5,
            message: `failed to pull image "${a[1]}": failed to resolve reference: not found`,
            node: CP1,
            method: "/machine.ImageService/Pull",
          })
          : t.pull(...a)),
  });
  try {
    const [n] = w.out.nodes;
    assertEquals([n!.node, n!.state, n!.reason], ["cp-1", "unresolved", "PullRefused"]);
    const op = (await w.journal.showOperation(n!.operationId!))!;
    assertEquals(op.attempts.map((a) => [a.phase, a.responseClass]), [["pull", "target-error"]]);
    const image = componentImage((await configOf(w.twin, CP1)).yamlSpec, "kube-apiserver")!;
    assert(image.endsWith(":v1.35.2"), image);
  } finally {
    await close(w);
  }
});

Deno.test("a configuration read older than this plan's earlier change on the node is never the basis of a change", async () => {
  // cp-1's machine configuration as first read (before its kube-apiserver change), served again
  // by a lagging proxy from the moment that change was accepted.
  let first: CosiResource | undefined;
  let lagging = false;
  const w = await world({
    talos: (t) =>
      withConfigRead(t, async (fresh) => {
        if (lagging && first) return structuredClone(first);
        const r = await fresh();
        first ??= structuredClone(r);
        return r;
      }),
    observer: () => ({
      onAttemptResponse: (a) => {
        if (a.phase === "component-config") lagging = true;
      },
    }),
  });
  try {
    const stop = w.out.nodes.at(-1)!;
    assertEquals(
      w.out.nodes.map((n) => [n.node, n.state]),
      [["cp-1", "completed"], ["cp-2", "completed"], ["cp-3", "completed"], [
        "cp-1",
        "unresolved",
      ]],
    );
    assertEquals(stop.reason, "ComponentConfigStale");
    const op = (await w.journal.showOperation(stop.operationId!))!;
    assertEquals(op.attempts.map((a) => a.phase), ["pull"], "no configuration change was sent");
    // cp-1 still runs the apiserver the plan moved: nothing undid it.
    const cfg = (await configOf(w.twin, CP1)).yamlSpec;
    assert(componentImage(cfg, "kube-apiserver")!.endsWith(":v1.36.0"));
  } finally {
    await close(w);
  }
});

Deno.test("a mirror pod whose Ready condition is False is not ready: the component is never established on Talos's word alone", async () => {
  let changed = false;
  const w = await world({
    kube: (k) =>
      replacing(k, "getObject", async (...a: Parameters<Kube["getObject"]>) => {
        const obj = await k.getObject(...a);
        if (!changed || !obj || a[1] !== "kube-apiserver-cp-1") return obj;
        // The kubelet reports the new pod, but not ready.
        return { ...obj, status: { conditions: [{ type: "Ready", status: "False" }] } };
      }),
    observer: () => ({
      onAttemptResponse: (a) => {
        if (a.phase === "component-config") changed = true;
      },
    }),
  });
  try {
    assertEquals(w.out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "failed", "ComponentVersionContradicted"],
    ]);
    assert(w.out.nodes[0]!.detail.includes("mirror pod v1.36.0 not ready"), w.out.nodes[0]!.detail);
  } finally {
    await close(w);
  }
});

Deno.test("the configuration floor is the highest version this plan's earlier changes on the node prove", async () => {
  const intent = (v: string) => ({
    phase: "component-config",
    kind: "intent",
    detail: JSON.stringify({ basedOnConfigVersion: v }),
  });
  const ops: Record<string, { machine: string; based: string; accepted: boolean }> = {
    "op-a": { machine: "cp-1", based: "5", accepted: true },
    "op-b": { machine: "cp-1", based: "9", accepted: true },
    "op-c": { machine: "cp-1", based: "7", accepted: false },
    "op-d": { machine: "cp-2", based: "40", accepted: true },
    "op-now": { machine: "cp-1", based: "30", accepted: true },
  };
  const journal = {
    listOperations: () =>
      Promise.resolve(
        Object.entries(ops).map(([id, o]) => ({ id, planDigest: "plan", machine: o.machine })),
      ),
    showOperation: (id: string) =>
      Promise.resolve({
        phases: [intent(ops[id]!.based)],
        attempts: [{
          phase: "component-config",
          responseClass: ops[id]!.accepted ? "accepted" : "lost",
        }],
      }),
  } as unknown as Journal;
  // op-b's accepted change left cp-1 at least at 10; the other node and the current step count not.
  assertEquals(await configVersionFloor(journal, "plan", "cp-1", "op-now"), 10n);
});

Deno.test("a component observed at the target completes only when its post-gate passes too", async () => {
  const w = await world({
    observer: (twin) => ({
      onAttemptResponse: (a) => {
        // Right after cp-1's change an operator cordons worker-4: every later round fails.
        if (a.phase === "component-config") void cordon(twin, "worker-4");
      },
    }),
  });
  try {
    const [n] = w.out.nodes;
    assertEquals(w.out.nodes.length, 1);
    // Established on the node, but the post-gate failed elsewhere: never completed.
    assertEquals([n!.node, n!.state, n!.reason], ["cp-1", "unresolved", "HealthFailedElsewhere"]);
    assert(n!.detail.includes("mirror pod v1.36.0 ready"), n!.detail);
    const op = (await w.journal.showOperation(n!.operationId!))!;
    assert(op.operation.state !== "completed");
  } finally {
    await close(w);
  }
});
