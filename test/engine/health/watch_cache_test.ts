// Readers over watch caches on the Kubernetes twin (real HTTPS, mutual TLS, real watch streams).
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { type KubeSim, startKubeSim } from "../../../src/sim/kube/server.ts";
import { mintPki } from "../../../src/sim/pki.ts";
import { ClusterEvidence } from "../../../src/engine/health/cluster_evidence.ts";
import { KubeEvidence } from "../../../src/engine/health/kube_evidence.ts";
import { parseHealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import type { HealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { collectRound } from "../../../src/engine/health_round.ts";
import { gateVerdict, type RoundOutcome } from "../../../src/domain/health/round.ts";
import { twinKube } from "./twin_kube.ts";

const FIXTURE = new URL("../../../fixtures/clusters/home-ops.yaml", import.meta.url);

interface World {
  sim: KubeSim;
  clock: SimClock;
  evidence: ClusterEvidence;
  kube: ReturnType<typeof twinKube>;
}

async function withTwin(fn: (w: World) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "health-"));
  const d = ClusterDescriptionSchema.parse(parse(Deno.readTextFileSync(FIXTURE)));
  const pki = mintPki({
    dir,
    caName: "twin-ca",
    algorithm: "p256",
    clients: { admin: ["system:masters"] },
  });
  const clock = new SimClock(Date.parse(d.spec.startTime));
  const sim = await startKubeSim({
    clock,
    faults: new FaultSchedule(),
    description: d,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
  });
  const admin = pki.clients.admin!;
  const kube = twinKube({
    url: sim.url,
    caPem: pki.ca.certPem,
    certPem: admin.certPem,
    keyPem: admin.keyPem,
  });
  const evidence = new ClusterEvidence(kube, undefined, clock);
  try {
    await fn({ sim, clock, evidence, kube });
  } finally {
    evidence.stop();
    await sim.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

function policy(bindings: string): HealthPolicy {
  const r = parseHealthPolicy(
    `apiVersion: cairn.dev/v1alpha1\nkind: HealthPolicy\nmetadata: {name: t, cluster: home-ops}\nspec:\n  bindings:\n${bindings}`,
    "t.yaml",
  );
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

/** Waits (real time, bounded) until the cache has seen the sim's change through its watch. */
async function until(pred: () => boolean) {
  for (let i = 0; i < 400 && !pred(); i++) await new Promise((r) => setTimeout(r, 5));
  assert(pred(), "condition not reached");
}

/** One round; afterwards every cache's watch is registered on the server (so events reach it). */
async function round(w: World, p: HealthPolicy): Promise<RoundOutcome> {
  const out = await collectRound({ clock: w.clock, evidence: w.evidence }, p, {
    intervalMs: 30_000,
  });
  // Every watch the caches opened has reached the server (so no event can slip past it).
  await until(() => (w.sim.stats.byVerb["watch"] ?? 0) >= w.evidence.kube.stats().watches);
  return out;
}

function type(w: World, apiVersion: string, kind: string) {
  return w.sim.store.typeOfKind(apiVersion, kind)!;
}

Deno.test("twin: a watch that disconnects makes the reader unreadable until the cache resyncs", async () => {
  await withTwin(async (w) => {
    const p = policy("    - {name: nodes, reader: nodes, requiredCoverage: 7}\n");
    const r1 = await round(w, p);
    assertEquals(r1.verdict, "pass", r1.message);
    const lists = w.sim.stats.byVerb["list"] ?? 0;
    for (let i = 0; i < 3; i++) assertEquals((await round(w, p)).verdict, "pass");
    assertEquals(w.sim.stats.byVerb["list"] ?? 0, lists, "no LIST per round after the first sync");
    w.sim.disconnectWatches();
    const cache = w.evidence.kube.caches.get("v1/Node")!;
    await until(() => cache.freshness.state === "stale");
    const stale = w.evidence.kube.view();
    const { readBinding } = await import("../../../src/domain/health/readers/index.ts");
    const r = readBinding(p.bindings[0]!, {
      nowMs: w.clock.now(),
      kube: stale,
      talos: { node: () => undefined },
    }, w.clock.now());
    assertEquals([r.verdict, r.reason], ["unreadable", "HealthCacheStale"]);
    assertEquals(r.basis.length, 0);
    const r2 = await round(w, p); // prepare() re-lists
    assertEquals(r2.verdict, "pass");
    assertEquals(w.sim.stats.byVerb["list"], lists + 1);
    assertEquals(cache.freshness.state, "live");
  });
});

Deno.test("twin: caches shared beyond one evidence keep watching when it stops: the next evidence's round lists nothing, a fresh round still lists", async () => {
  await withTwin(async (w) => {
    const p = policy("    - {name: nodes, reader: nodes, requiredCoverage: 7}\n");
    const shared = new KubeEvidence(w.kube, w.clock);
    try {
      const run = (e: ClusterEvidence, fresh = false) =>
        collectRound({ clock: w.clock, evidence: e }, p, { intervalMs: 30_000, fresh });
      // A preview's round lists into the shared caches; stopping its evidence leaves them watching.
      const preview = new ClusterEvidence(w.kube, undefined, w.clock, new Map(), undefined, shared);
      assertEquals((await run(preview)).verdict, "pass");
      preview.stop();
      const cache = shared.caches.get("v1/Node")!;
      assertEquals(cache.freshness.state, "live");
      await until(() => (w.sim.stats.byVerb["watch"] ?? 0) >= shared.stats().watches);
      const lists = w.sim.stats.byVerb["list"] ?? 0;
      // The run's gate round reads them as they are: no LIST first.
      const gate = new ClusterEvidence(w.kube, undefined, w.clock, new Map(), undefined, shared);
      assertEquals((await run(gate)).verdict, "pass");
      assertEquals(w.sim.stats.byVerb["list"] ?? 0, lists, "the gate round listed nothing");
      // A node going NotReady reaches the shared cache through its watch.
      w.sim.setNodeReady("worker-1", false);
      await until(() =>
        cache.snapshot().items.some((n) =>
          n.metadata?.name === "worker-1" &&
          !JSON.stringify((n["status"] as Record<string, unknown>)["conditions"]).includes('"True"')
        )
      );
      assertEquals((await run(gate)).verdict, "fail");
      // A round that decides a terminal state lists again, shared caches or not.
      await run(gate, true);
      assert((w.sim.stats.byVerb["list"] ?? 0) > lists, "the fresh round listed");
      gate.stop();
      assertEquals(cache.freshness.state, "live");
    } finally {
      shared.stop();
    }
  });
});

Deno.test("twin: an earlier pass does not mask a node that goes NotReady before the next round", async () => {
  await withTwin(async (w) => {
    const p = policy("    - {name: nodes, reader: nodes, requiredCoverage: 7}\n");
    const rounds: RoundOutcome[] = [await round(w, p)];
    w.sim.setNodeReady("worker-2", false);
    await until(() =>
      w.evidence.kube.view().resource("v1/Node")!.items.some((n) =>
        n.metadata?.name === "worker-2" &&
        !JSON.stringify((n["status"] as Record<string, unknown>)["conditions"]).includes('"True"')
      )
    );
    rounds.push(await round(w, p));
    assertEquals(rounds.map((r) => r.verdict), ["pass", "fail"]);
    assertEquals(rounds[1]!.reason, "NodeNotReady");
    assertEquals(gateVerdict(rounds), "fail");
  });
});

Deno.test("twin: a CR without status is unreadable and an older-generation Deployment fails", async () => {
  await withTwin(async (w) => {
    const p = policy([
      "    - name: ceph",
      "      reader: kube-object",
      "      healthCheck: {apiVersion: ceph.rook.io/v1, kind: CephCluster, name: rook-ceph, namespace: rook-ceph, expr: \"status.ceph.health in ['HEALTH_OK']\"}",
      "    - {name: workloads, reader: workloads, selection: {kinds: [Deployment], namespaces: [flux-system]}}",
      "",
    ].join("\n"));
    const depT = type(w, "apps/v1", "Deployment");
    // The twin runs no Deployment controller: write the status one would (current generation).
    for (const d of w.sim.store.list(depT, "flux-system")) {
      const gen = d.metadata.generation ?? 1;
      const n = (d as { spec?: { replicas?: number } }).spec?.replicas ?? 1;
      const status = {
        observedGeneration: gen,
        replicas: n,
        updatedReplicas: n,
        readyReplicas: n,
        availableReplicas: n,
      };
      w.sim.store.put(depT, { ...d, status } as typeof d);
    }
    const ok = await round(w, p);
    assertEquals(ok.results.map((r) => r.verdict), ["pass", "pass"], ok.message);
    const cephT = type(w, "ceph.rook.io/v1", "CephCluster");
    const ceph = w.sim.store.get(cephT, "rook-ceph", "rook-ceph")!;
    const { status: _s, ...noStatus } = ceph as Record<string, unknown>;
    w.sim.store.put(cephT, noStatus as typeof ceph);
    const dep = w.sim.store.get(depT, "flux-system", "kustomize-controller")! as Record<
      string,
      unknown
    >;
    // A spec change bumps metadata.generation; the status still describes the old one.
    const spec = dep["spec"] as Record<string, unknown>;
    w.sim.store.put(depT, { ...dep, spec: { ...spec, minReadySeconds: 5 } } as never);
    await until(() => {
      const v = w.evidence.kube.view();
      return v.resource("ceph.rook.io/v1/CephCluster")!.items.every((o) => !("status" in o)) &&
        v.resource("apps/v1/Deployment")!.items.some((o) => (o.metadata?.generation ?? 0) > 1);
    });
    const r = await round(w, p);
    assertEquals(r.results.map((x) => [x.verdict, x.reason]), [
      ["unreadable", "HealthStatusMissing"],
      ["fail", "HealthGenerationStale"],
    ]);
    assertEquals(r.verdict, "fail");
  });
});

Deno.test("twin: the primary's PDB blocks only the node that runs the primary", async () => {
  await withTwin(async (w) => {
    const p = policy(
      "    - {name: drain, reader: pdb-feasibility, failOnTemporary: false, requiredCoverage: 7}\n",
    );
    const r = await round(w, p);
    const blocked = r.results[0]!.findings.filter((f) => f.verdict === "fail");
    assert(blocked.length > 0, r.message);
    assertEquals([...new Set(blocked.map((f) => f.subject.split(" ")[0]))], ["worker-1"]);
    assert(
      blocked.every((f) =>
        f.reason === "PdbBlocksPermanently" && f.subject.includes("postgres18-primary")
      ),
    );
    assert(
      r.results[0]!.basis.some((b) =>
        b.kind === "PodDisruptionBudget" && b.uid && b.resourceVersion
      ),
    );
  });
});
