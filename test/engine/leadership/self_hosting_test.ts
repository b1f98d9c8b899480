/**
 * Self-hosting safety on the twin (seed 004's incident): cairn runs as a two-replica Deployment
 * on the cluster it upgrades, and the leader's own pod is on the node the plan drains next.
 * Before that node's step begins the leader hands the Lease over and stops (no commitment, no
 * cordon, nothing sent); the other replica, on another node, takes the Lease at its next round
 * and runs the step from the journal to completion, draining the old leader's pod with the rest.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { startInprocRollout } from "../../../src/app/inproc_rollout.ts";
import { LeaderElector } from "../../../src/engine/leadership/elector.ts";
import {
  decideSelfHosting,
  selfHostingGuard,
} from "../../../src/engine/leadership/self_hosting.ts";
import type { KubePod } from "../../../src/ports/kube.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { InprocLeaseStore } from "../../../src/sim/inproc/lease.ts";
import type { Obj } from "../../../src/sim/kube/store.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const NS = "cairn-system";
const SELECTOR = "app.kubernetes.io/name=cairn";
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const PLAN_PATH = join(ROOT, "plans/talos-v1.14.2.yaml");

/** cairn's own Deployment, two replicas, as deploy/deployment.yaml runs it. */
const CAIRN_DEPLOYMENT = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "cairn", namespace: NS },
  spec: {
    replicas: 2,
    selector: { matchLabels: { "app.kubernetes.io/name": "cairn" } },
    template: {
      metadata: { labels: { "app.kubernetes.io/name": "cairn" } },
      spec: {
        terminationGracePeriodSeconds: 30,
        containers: [{ name: "cairn", image: "registry.example/cairn:0.1.0" }],
      },
    },
  },
};

Deno.test("the leader's pod is on the node to drain: it hands over before the step, the other replica runs it", async () => {
  const description = await homeOps();
  description.spec.objects.push(CAIRN_DEPLOYMENT);
  const twin = startInprocTwin({ description });
  const dir = await Deno.makeTempDir({ prefix: "cairn-selfhost-" });
  const url = `file:${join(dir, "journal.db")}`;
  const journals = [
    await openJournal({ url, ids: counterIds("a"), nowMs: twin.clock.now() }),
    await openJournal({ url, ids: counterIds("b"), nowMs: twin.clock.now() }),
  ];
  try {
    const pods = twin.store.list(twin.controllers.pods).filter((p) =>
      p.metadata.namespace === NS
    ) as Obj[];
    assertEquals(pods.length, 2, "two cairn replicas scheduled");
    const nodeOf = (p: Obj) => String((p.spec as { nodeName: string }).nodeName);
    const [podA, podB] = pods as [Obj, Obj];
    assert(nodeOf(podA) !== nodeOf(podB), "the replicas run on different nodes");
    const drained = nodeOf(podA);
    const planText = onlyNodes(drained)(await Deno.readTextFile(PLAN_PATH));
    const replica = async (i: 0 | 1, pod: Obj) => {
      const log = new MemoryLogger();
      const elector = new LeaderElector({
        store: new InprocLeaseStore(twin.store, NS, "cairn-leader"),
        clock: twin.sim,
        log,
        config: { identity: pod.metadata.name, ...TIMING },
      });
      const rollout = await startInprocRollout({
        description,
        planBytes: new TextEncoder().encode(planText),
        planFile: PLAN_PATH,
        authority: { files: workingTreeBoundFiles(PLAN_PATH) },
        log,
        journal: journals[i]!,
        twin,
      });
      const selfHosting = selfHostingGuard({
        kube: twin.kube,
        self: { namespace: NS, name: pod.metadata.name },
        replicaSelector: SELECTOR,
        leadership: elector,
        log,
        timeoutMs: 10_000,
      });
      return { elector, rollout, selfHosting, log };
    };
    const a = await replica(0, podA), b = await replica(1, podB);
    await a.elector.round();
    await b.elector.round();
    const termA = a.elector.term();
    assert(termA, "the replica on the drained node leads");

    const sentBefore = { talos: twin.talos.stats.totalMutating, kube: twin.kube.stats.mutating };
    const outA = await a.rollout.run({ owner: "ctl_a", signal: termA, selfHosting: a.selfHosting });
    assertEquals(outA.state, "stopped");
    assertEquals(outA.nodes.map((n) => [n.node, n.state, n.reason]), [
      [drained, "stopped", "LeadershipHandedOver"],
    ]);
    assert(termA.aborted, "its term ended with the hand-over");
    assertEquals(await journals[0]!.listOperations(), [], "no commitment before the hand-over");
    assertEquals(twin.talos.stats.totalMutating, sentBefore.talos, "nothing sent to Talos");
    assertEquals(twin.kube.stats.mutating, sentBefore.kube, "no cordon, no eviction");
    assert(a.log.entries.some((e) => e.msg === "leadership released"));

    // The other replica takes the released Lease at its next round (no lease duration to wait).
    await twin.sim.advance(TIMING.retryPeriodMs);
    await a.elector.round(); // the old leader stands down
    await b.elector.round();
    const termB = b.elector.term();
    assert(termB, "the replica on another node leads");
    assertEquals(a.elector.term(), undefined);

    const outB = await b.rollout.run({ owner: "ctl_b", signal: termB, selfHosting: b.selfHosting });
    assertEquals(outB.state, "completed");
    const ops = await journals[1]!.listOperations();
    assertEquals(ops.map((o) => [o.machine, o.owner, o.state]), [[drained, "ctl_b", "completed"]]);
    // The old leader's pod was drained with the node's other pods (the ReplicaSet replaced it).
    assert(
      !twin.store.list(twin.controllers.pods).some((p) => p.metadata.name === podA.metadata.name),
    );
    assertEquals(twin.cluster.nodes.get(drained)!.runningVersion, "v1.14.2");
  } finally {
    twin.stop();
    for (const j of journals) await j.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const pod = (name: string, nodeName: string, ready = true): KubePod => ({
  namespace: NS,
  name,
  uid: name,
  resourceVersion: "1",
  nodeName,
  phase: "Running",
  ready,
  labels: { "app.kubernetes.io/name": "cairn" },
  annotations: {},
  owner: undefined,
  daemonSet: false,
  mirror: false,
  emptyDir: false,
  terminationGracePeriodSeconds: 30,
  deletionTimestamp: undefined,
});

Deno.test("hand over only to a ready replica on another node; otherwise hold; an unknown own pod holds", () => {
  const self = { namespace: NS, name: "a" };
  assertEquals(decideSelfHosting("w1", pod("a", "w2"), self, []).kind, "proceed");
  assertEquals(decideSelfHosting("w1", pod("a", "w1"), self, [pod("a", "w1"), pod("b", "w2")]), {
    kind: "hand-over",
    peer: "b on w2",
  });
  const held = (peers: KubePod[]) => decideSelfHosting("w1", pod("a", "w1"), self, peers);
  assertEquals(held([pod("a", "w1")]).kind, "held", "alone");
  assertEquals(held([pod("b", "w1")]).kind, "held", "the peer is on the same node");
  assertEquals(held([pod("b", "w2", false)]).kind, "held", "the peer is not ready");
  assertEquals(
    held([{ ...pod("b", "w2"), deletionTimestamp: "2026-12-01T00:00:00Z" }]).kind,
    "held",
    "the peer is terminating",
  );
  const unknown = decideSelfHosting("w1", undefined, self, [pod("b", "w2")]);
  assertEquals(unknown.kind === "held" && unknown.reason, "SelfPodUnknown");
});
