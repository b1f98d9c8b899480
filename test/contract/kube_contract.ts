/**
 * The Kube port contract, run against the Kubernetes simulator through a factory: optimistic
 * cordon/uncordon with field-manager ownership, eviction outcomes read from the body (PDB 429,
 * multiple PDBs, gone), termination over the grace period in virtual time, DaemonSet pods kept,
 * paginated lists, unstructured reads and watches (events, close, abort, 410 → expired).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { Kube, KubePod, KubeResourceRef, KubeWatchEvent } from "../../src/ports/kube.ts";
import { CAIRN_FIELD_MANAGER, unschedulableOwners } from "../../src/engine/cordon_ownership.ts";
import type { ClusterDescription } from "../../src/sim/cluster_description.ts";
import type { SimClock } from "../../src/sim/clock.ts";
import type { FaultSchedule } from "../../src/sim/faults.ts";
import type { KubeSim } from "../../src/sim/kube/server.ts";
import { kubeWorld, NS, WORLD_PODS } from "../_helpers/kube_world.ts";

/** What a factory hands the suite: the port under test and the simulator behind it. */
export interface KubeHarness {
  readonly kube: Kube;
  readonly sim: KubeSim;
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly dispose: () => Promise<void>;
}

export interface KubeHarnessOptions {
  /** Simulator watch history; versions older than this many events get 410. */
  readonly historySize?: number;
  /** LIST page size the port should use, so that the world spans several pages. */
  readonly pageSize: number;
}

export type KubeFactory = (
  description: ClusterDescription,
  opts: KubeHarnessOptions,
) => Promise<KubeHarness>;

const NODES: KubeResourceRef = { group: "", version: "v1", plural: "nodes", namespaced: false };
const PAGE = 10;

async function withHarness(
  factory: KubeFactory,
  fn: (h: KubeHarness) => Promise<void>,
  historySize?: number,
): Promise<void> {
  const h = await factory(kubeWorld(), {
    pageSize: PAGE,
    ...(historySize !== undefined ? { historySize } : {}),
  });
  try {
    await fn(h);
  } finally {
    await h.dispose();
  }
}

async function podsOf(kube: Kube, app: string): Promise<readonly KubePod[]> {
  return (await kube.listPods(undefined, { namespace: NS, labelSelector: `app=${app}` })).items;
}

const ref = (p: KubePod) => ({ namespace: p.namespace, name: p.name });

export function kubeContract(name: string, factory: KubeFactory): void {
  const test = (what: string, fn: (h: KubeHarness) => Promise<void>, historySize?: number) =>
    Deno.test(`${name}: ${what}`, () => withHarness(factory, fn, historySize));

  test("cordon with a stale resourceVersion is refused as a conflict and writes nothing", async ({ kube }) => {
    const node = (await kube.getNode("w-1"))!;
    const out = await kube.cordon("w-1", String(Number(node.resourceVersion) - 1));
    assertEquals(out.kind, "conflict");
    const after = (await kube.getNode("w-1"))!;
    assertEquals([after.unschedulable, after.resourceVersion], [false, node.resourceVersion]);
  });

  test("cordon records the prior state and cairn owns spec.unschedulable; uncordon clears it", async ({ kube }) => {
    const node = (await kube.getNode("w-1"))!;
    const cordon = await kube.cordon("w-1", node.resourceVersion);
    assert(cordon.kind === "applied", JSON.stringify(cordon));
    assertEquals(cordon.priorUnschedulable, false);
    const raw = (await kube.getObject(NODES, "w-1"))!;
    assertEquals(unschedulableOwners(raw), [CAIRN_FIELD_MANAGER]);
    const cordoned = (await kube.getNode("w-1"))!;
    assertEquals([cordoned.unschedulable, cordoned.resourceVersion], [
      true,
      cordon.resourceVersion,
    ]);
    const again = await kube.cordon("w-1", cordoned.resourceVersion);
    assert(again.kind === "applied" && again.priorUnschedulable, "second cordon sees prior true");
    const fresh = (await kube.getNode("w-1"))!;
    const uncordon = await kube.uncordon("w-1", fresh.resourceVersion);
    assert(uncordon.kind === "applied" && uncordon.priorUnschedulable);
    assertEquals((await kube.getNode("w-1"))!.unschedulable, false);
    assertEquals((await kube.cordon("nope", "1")).kind, "not-found");
  });

  test("eviction blocked by a 0-disruption PDB returns 429 with the server's message", async ({ kube, sim }) => {
    const [pod] = await podsOf(kube, "web");
    const out = await kube.evict(ref(pod!));
    assert(out.kind === "blocked", JSON.stringify(out));
    assertEquals(out.httpStatus, 429);
    assert(/needs 2 healthy pods and has 2 currently/.test(out.message), out.message);
    assertEquals([out.causes, out.retryAfterSeconds], [["DisruptionBudget"], undefined]);
    assertEquals((await kube.getPod(ref(pod!)))!.deletionTimestamp, undefined);
    assertEquals(sim.stats.evictions.blocked, 1);
  });

  test("eviction while the PDB status is stale is blocked with Retry-After", async ({ kube, sim }) => {
    const pdbs = sim.controllers.pdbs;
    const cur = sim.store.get(pdbs, NS, "slow")!;
    sim.store.put(pdbs, { ...cur, spec: { ...(cur.spec as object), maxUnavailable: 2 } });
    const [pod] = await podsOf(kube, "slow");
    const out = await kube.evict(ref(pod!));
    assert(out.kind === "blocked", JSON.stringify(out));
    assertEquals(out.retryAfterSeconds, 10);
    const pdb = (await kube.listPdbs({ namespace: NS })).items.find((p) => p.name === "slow")!;
    assert(pdb.observedGeneration < pdb.generation, "the port shows the stale status");
  });

  test("a pod selected by two PDBs fails with EvictionMultiplePdbs; a missing pod is gone", async ({ kube }) => {
    const [pod] = await podsOf(kube, "api");
    const out = await kube.evict(ref(pod!));
    assert(out.kind === "failed", JSON.stringify(out));
    assertEquals([out.reason, out.httpStatus], ["EvictionMultiplePdbs", 500]);
    assertEquals((await kube.evict({ namespace: NS, name: "no-such-pod" })).kind, "gone");
  });

  test("an evicted pod that ignores SIGTERM terminates only at the end of its grace period", async ({ kube, clock, faults }) => {
    const [pod, other] = await podsOf(kube, "slow");
    faults.arm({ kind: "ignore-sigterm", point: "kube.pod", target: pod!.name });
    assertEquals(pod!.terminationGracePeriodSeconds, 60);
    assertEquals((await kube.evict(ref(pod!))).kind, "accepted");
    const terminating = (await kube.getPod(ref(pod!)))!;
    assert(terminating.deletionTimestamp !== undefined, "deletionTimestamp set at once");
    await clock.advance(59_000);
    assert((await kube.getPod(ref(pod!))) !== undefined, "still running at 59 s");
    await clock.advance(1_000);
    assertEquals(await kube.getPod(ref(pod!)), undefined);
    // A ReplicaSet does not count a terminating pod: the replacement was created at the
    // eviction and has been Ready for most of the minute, so the budget allows the next one.
    assertEquals((await podsOf(kube, "slow")).length, 2, "the ReplicaSet recreated the pod");
    assertEquals((await kube.evict(ref(other!))).kind, "accepted");
  });

  test("drain-like evictions remove workload pods from a cordoned node and keep DaemonSet pods", async ({ kube, clock }) => {
    const node = (await kube.getNode("w-2"))!;
    assertEquals((await kube.cordon("w-2", node.resourceVersion)).kind, "applied");
    const before = (await kube.listPods("w-2")).items;
    const ds = before.filter((p) => p.daemonSet);
    assertEquals(ds.length, 1);
    const outcomes = new Map<string, string>();
    for (const p of before.filter((p) => !p.daemonSet)) {
      outcomes.set(p.labels.app!, (await kube.evict(ref(p))).kind);
    }
    assertEquals(outcomes.get("bulk"), "accepted");
    assertEquals(outcomes.get("web"), "blocked");
    assertEquals(outcomes.get("api"), "failed");
    await clock.advance(10_000);
    const after = (await kube.listPods("w-2")).items;
    assertEquals(after.filter((p) => p.daemonSet).map((p) => p.uid), ds.map((p) => p.uid));
    assertEquals(after.filter((p) => p.labels.app === "bulk"), []);
    const bulk = await podsOf(kube, "bulk");
    assertEquals(bulk.length, 30);
    assert(bulk.every((p) => p.nodeName === "w-1"), "replacements avoid the cordoned node");
  });

  test("a container image change at a stale resourceVersion is a conflict and writes nothing; at the current one only that image moves, owned by cairn", async ({ kube }) => {
    const DS = { group: "apps", version: "v1", plural: "daemonsets", namespaced: true };
    const before = (await kube.getObject(DS, "agent", "kube-system"))!;
    const rv = before.metadata!.resourceVersion!;
    const stale = await kube.setContainerImage(DS, "kube-system", "agent", {
      container: "agent",
      image: "registry.example/agent:2",
      expectedResourceVersion: String(Number(rv) - 1),
    });
    assertEquals(stale.kind, "conflict");
    const still = (await kube.getObject(DS, "agent", "kube-system"))!;
    assertEquals(still.metadata!.resourceVersion, rv);
    const applied = await kube.setContainerImage(DS, "kube-system", "agent", {
      container: "agent",
      image: "registry.example/agent:2",
      expectedResourceVersion: rv,
    });
    assert(applied.kind === "applied", JSON.stringify(applied));
    assertEquals(applied.generation, (before.metadata!.generation ?? 1) + 1);
    const after = (await kube.getObject(DS, "agent", "kube-system"))!;
    const tpl = (after.spec as { template: { spec: { containers: Record<string, unknown>[] } } })
      .template.spec.containers;
    // Merged by name: the one container keeps its name, only its image changed.
    assertEquals(tpl, [{ name: "agent", image: "registry.example/agent:2" }]);
    const mine = (after.metadata!.managedFields ?? []).find((e) =>
      e.manager === CAIRN_FIELD_MANAGER
    );
    // An Update entry of cairn's over the containers (a real apiserver keys the list item and
    // names `f:image` below it; the twin's field sets keep lists whole).
    assertEquals(mine?.operation, "Update");
    assert(JSON.stringify(mine?.fieldsV1).includes('"f:containers"'), JSON.stringify(mine));
    const gone = await kube.setContainerImage(DS, "kube-system", "no-such", {
      container: "agent",
      image: "registry.example/agent:2",
      expectedResourceVersion: rv,
    });
    assertEquals(gone.kind, "not-found");
  });

  test("lists follow continue tokens across pages and honour selectors", async ({ kube, sim }) => {
    const lists = sim.stats.byVerb.list ?? 0;
    const all = await kube.listPods();
    assertEquals(all.items.length, WORLD_PODS);
    assertEquals(new Set(all.items.map((p) => p.uid)).size, WORLD_PODS);
    assert((sim.stats.byVerb.list ?? 0) - lists >= Math.ceil(WORLD_PODS / PAGE), "several pages");
    assert(Number(all.resourceVersion) > 0);
    const onW1 = await kube.listPods("w-1");
    assert(onW1.items.length > 0 && onW1.items.every((p) => p.nodeName === "w-1"));
    const cp = await kube.listNodes({ labelSelector: "node-role.kubernetes.io/control-plane" });
    assertEquals(cp.items.map((n) => [n.name, n.controlPlane]), [["cp-1", true]]);
  });

  test("unstructured reads return custom resources and built-ins as the server sent them", async ({ kube }) => {
    const ceph = { group: "ceph.rook.io", version: "v1", plural: "cephclusters", namespaced: true };
    const cc = (await kube.getObject(ceph, "rook-ceph", "rook-ceph"))!;
    assertEquals((cc.status as { ceph: { health: string } }).ceph.health, "HEALTH_OK");
    assertEquals(await kube.getObject(ceph, "missing", "rook-ceph"), undefined);
    const cms = { group: "", version: "v1", plural: "configmaps", namespaced: true };
    const l = await kube.listObjects(cms, { namespace: NS, labelSelector: "tier=config" });
    assertEquals(l.items.map((o) => [o.kind, o.metadata?.name]), [["ConfigMap", "settings"]]);
    assertEquals((await kube.serverVersion()).gitVersion, "v1.35.2");
  });

  test("a watch delivers events from a version, ends as closed when the server cuts it, and aborts", async ({ kube, sim }) => {
    const start = (await kube.listNodes()).resourceVersion;
    const events: KubeWatchEvent[] = [];
    const ended = kube.watch(NODES, { resourceVersion: start }, (e) => {
      events.push(e);
      if (events.length === 1) sim.disconnectWatches();
    });
    await sim.waitFor(() => sim.store.watcherCount > 0);
    const node = (await kube.getNode("cp-1"))!;
    await kube.cordon("cp-1", node.resourceVersion);
    assertEquals(await ended, { kind: "closed" });
    assertEquals(events.map((e) => [e.type, e.object.metadata?.name]), [["MODIFIED", "cp-1"]]);
    const ac = new AbortController();
    const live = kube.watch(NODES, { signal: ac.signal }, () => {});
    ac.abort();
    assertEquals(await live, { kind: "aborted" });
  });

  test(
    "a watch from a version older than the server's history ends as expired",
    async ({ kube }) => {
      const events: KubeWatchEvent[] = [];
      // A replayed event would mean the version is still served: stop rather than wait.
      const ac = new AbortController();
      const end = await kube.watch(NODES, { resourceVersion: "1", signal: ac.signal }, (e) => {
        events.push(e);
        ac.abort();
      });
      assertEquals([end, events.length], [{ kind: "expired" }, 0]);
    },
    10,
  );

  Deno.test(`${name}: requested deprecated APIs are read from the apiserver's /metrics gauge`, async () => {
    const d = kubeWorld();
    d.spec.kubernetesComponents = {
      inventory: "present",
      restartSeconds: 20,
      deprecatedApiRequests: [{
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1beta3",
        resource: "flowschemas",
        removedRelease: "1.32",
      }],
    };
    const h = await factory(d, { pageSize: PAGE });
    try {
      assertEquals(await h.kube.requestedDeprecatedApis({ timeoutMs: 20_000 }), [{
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1beta3",
        resource: "flowschemas",
        removedRelease: "1.32",
      }]);
    } finally {
      await h.dispose();
    }
  });
}
