/**
 * The twin's Flux and operators (`sim/kube/gitops.ts`) on virtual time: a merge reaches the
 * cluster step by step (Git revision, Kustomizations, OCIRepository pin at a new generation, the
 * chart artifact, the HelmRelease upgrade); the Rook operator re-renders the CSI plugins only when
 * it reconciles; the Cilium agent rolls node by node; CloudNative-PG restarts replicas, switches
 * over, then restarts the old primary.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import type { Obj } from "../../../src/sim/kube/store.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});
const COMMIT = "ab".repeat(20);

async function twin(rookRerendersOnRestart = true) {
  return startInprocTwin({ description: await homeOps(), gitops: { rookRerendersOnRestart } });
}

function get(
  t: Awaited<ReturnType<typeof twin>>,
  g: string,
  v: string,
  p: string,
  ns: string,
  n: string,
) {
  return t.store.get(t.store.findType(g, v, p)!, ns, n)!;
}

function images(
  t: Awaited<ReturnType<typeof twin>>,
  ns: string,
  label: [string, string],
): string[] {
  return t.store.list(t.controllers.pods, ns)
    .filter((p: Obj) => rec(p.metadata.labels)[label[0]] === label[1])
    .map((p: Obj) => String(rec((rec(p.status).containerStatuses as R[])[0]).image));
}

Deno.test("a Rook merge: revision, pins, chart artifact and HelmRelease upgrade, then the plugins re-rendered", async () => {
  const t = await twin();
  try {
    t.gitops.merge({ commit: COMMIT, ociTags: { "rook-ceph/rook-ceph": "v1.21.0" } });
    await t.sim.advance(16_000);
    const git = get(
      t,
      "source.toolkit.fluxcd.io",
      "v1",
      "gitrepositories",
      "flux-system",
      "home-ops",
    );
    assertEquals(rec(rec(git.status).artifact).revision, `main@sha1:${COMMIT}`);
    const ks = get(
      t,
      "kustomize.toolkit.fluxcd.io",
      "v1",
      "kustomizations",
      "flux-system",
      "rook-ceph",
    );
    assertEquals(rec(ks.status).lastAppliedRevision, `main@sha1:${COMMIT}`);
    // The pin moved: a new generation the source-controller has not observed yet.
    let oci = get(t, "source.toolkit.fluxcd.io", "v1", "ocirepositories", "rook-ceph", "rook-ceph");
    assertEquals([oci.metadata.generation, rec(oci.status).observedGeneration], [2, 1]);
    await t.sim.advance(10_000);
    oci = get(t, "source.toolkit.fluxcd.io", "v1", "ocirepositories", "rook-ceph", "rook-ceph");
    assertEquals(rec(oci.status).observedGeneration, 2);
    assert(String(rec(rec(oci.status).artifact).revision).startsWith("v1.21.0@sha256:"));
    await t.sim.advance(20_000);
    const hr = get(t, "helm.toolkit.fluxcd.io", "v2", "helmreleases", "rook-ceph", "rook-ceph");
    const history = rec(hr.status).history as R[];
    assertEquals([history[0]!.chartVersion, history[0]!.status, history[1]!.chartVersion], [
      "1.21.0",
      "deployed",
      "1.20.2",
    ]);
    assertEquals(rec(hr.status).lastAttemptedRevision, "1.21.0");
    // Mid-roll: the plugins still run the old cephcsi until the operator reconciles.
    assert(
      images(t, "rook-ceph", ["app.kubernetes.io/part-of", "ceph-csi"]).every((i) =>
        i.endsWith(":v3.17.1")
      ),
    );
    await t.sim.advance(10 * 60_000);
    assertEquals(
      new Set(images(t, "rook-ceph", ["app.kubernetes.io/part-of", "ceph-csi"])),
      new Set(["quay.io/cephcsi/cephcsi:v3.18.1"]),
    );
    assertEquals(images(t, "rook-ceph", ["app", "rook-ceph-operator"]), [
      "docker.io/rook/ceph:v1.21.0",
    ]);
  } finally {
    t.stop();
  }
});

Deno.test("a Rook operator that does not reconcile its Driver CRs leaves every plugin on the old cephcsi", async () => {
  const t = await twin(false);
  try {
    t.gitops.merge({ commit: COMMIT, ociTags: { "rook-ceph/rook-ceph": "v1.21.0" } });
    await t.sim.advance(60 * 60_000);
    assertEquals(images(t, "rook-ceph", ["app", "rook-ceph-operator"]), [
      "docker.io/rook/ceph:v1.21.0",
    ]);
    assertEquals(
      new Set(images(t, "rook-ceph", ["app.kubernetes.io/part-of", "ceph-csi"])),
      new Set(["quay.io/cephcsi/cephcsi:v3.17.1"]),
    );
    assert(t.gitops.events.some((e) => e.includes("did not reconcile its CSI Driver CRs")));
  } finally {
    t.stop();
  }
});

Deno.test("a Cilium chart bump rolls the agent DaemonSet one node at a time", async () => {
  const t = await twin();
  try {
    t.gitops.merge({ commit: COMMIT, ociTags: { "kube-system/cilium": "1.18.3" } });
    await t.sim.advance(56_000);
    const mid = images(t, "kube-system", ["k8s-app", "cilium"]);
    assertEquals(mid.filter((i) => i.endsWith(":v1.18.3")).length, 1, mid.join(","));
    await t.sim.advance(10 * 60_000);
    assertEquals(
      new Set(images(t, "kube-system", ["k8s-app", "cilium"])),
      new Set(["quay.io/cilium/cilium:v1.18.3"]),
    );
    // The DaemonSet's status counts the moved pods as updated (their revision is the template's).
    const st = rec(get(t, "apps", "v1", "daemonsets", "kube-system", "cilium").status);
    assertEquals(st.updatedNumberScheduled, st.desiredNumberScheduled);
    assertEquals(st.numberAvailable, st.desiredNumberScheduled);
  } finally {
    t.stop();
  }
});

Deno.test("a CloudNative-PG operator bump restarts the replicas, switches over, then restarts the old primary", async () => {
  const t = await twin();
  try {
    const before = get(t, "postgresql.cnpg.io", "v1", "clusters", "database", "postgres18");
    assertEquals(rec(before.status).currentPrimary, "postgres18-1");
    t.gitops.merge({ commit: COMMIT, ociTags: { "database/cloudnative-pg": "0.27.0" } });
    await t.sim.advance(75_000);
    const during = get(t, "postgresql.cnpg.io", "v1", "clusters", "database", "postgres18");
    assertEquals(rec(during.status).readyInstances, 2, "one instance restarting");
    await t.sim.advance(5 * 60_000);
    const after = get(t, "postgresql.cnpg.io", "v1", "clusters", "database", "postgres18");
    assertEquals(rec(after.status).currentPrimary, "postgres18-2");
    assertEquals(rec(after.status).readyInstances, 3);
    const order = t.gitops.events.filter((e) => e.includes("cnpg")).map((e) =>
      e.split(" ").slice(1).join(" ")
    );
    assertEquals(order, [
      "cnpg instance database/postgres18-2 restarting",
      "cnpg instance database/postgres18-3 restarting",
      "cnpg Cluster database/postgres18: switchover from postgres18-1 to postgres18-2",
      "cnpg instance database/postgres18-1 restarting",
      "cnpg Cluster database/postgres18: every instance restarted",
    ]);
  } finally {
    t.stop();
  }
});
