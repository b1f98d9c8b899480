// The real kubectl against the Kubernetes simulator over mutual TLS.
import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { parse } from "yaml";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { type KubeSim, startKubeSim, writeKubeconfig } from "../../../src/sim/kube/server.ts";
import { mintPki } from "../../../src/sim/pki.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const FIXTURE = new URL("../../../fixtures/clusters/home-ops.yaml", import.meta.url);

async function withSim(
  advanceOnRequestMs: number,
  fn: (sim: KubeSim, kubeconfig: string) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), "kubesim-"));
  const d = ClusterDescriptionSchema.parse(parse(Deno.readTextFileSync(FIXTURE)));
  const pki = mintPki({
    dir,
    caName: "twin-ca",
    algorithm: "p256",
    clients: { admin: ["system:masters"] },
  });
  const sim = await startKubeSim({
    clock: new SimClock(Date.parse(d.spec.startTime)),
    faults: new FaultSchedule(),
    description: d,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    advanceOnRequestMs,
  });
  const kubeconfig = join(dir, "kubeconfig");
  const admin = pki.clients.admin!;
  writeKubeconfig(kubeconfig, {
    url: sim.url,
    caPem: pki.ca.certPem,
    clientCertPem: admin.certPem,
    clientKeyPem: admin.keyPem,
  });
  try {
    await fn(sim, kubeconfig);
  } finally {
    await sim.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

function kubectl(kubeconfig: string, ...args: string[]) {
  const child = new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return child.output().then((o) => ({
    code: o.code,
    out: new TextDecoder().decode(o.stdout),
    err: new TextDecoder().decode(o.stderr),
  }));
}

const unschedulable = (sim: KubeSim, node: string) =>
  (sim.store.get(sim.controllers.nodes, undefined, node)!.spec as { unschedulable?: boolean })
    .unschedulable === true;

Deno.test("kubectl get nodes -o wide, cordon and uncordon work against the simulator over mTLS", async () => {
  await withSim(0, async (sim, kc) => {
    const get = await kubectl(kc, "get", "nodes", "-o", "wide");
    assertEquals(get.code, 0, get.err);
    for (const n of ["cp-1", "cp-2", "cp-3", "worker-1", "worker-4"]) {
      assertMatch(get.out, new RegExp(`^${n}\\b`, "m"));
    }
    const cordon = await kubectl(kc, "cordon", "worker-2");
    assertEquals(cordon.code, 0, cordon.err);
    assertMatch(cordon.out, /worker-2 cordoned/);
    assert(unschedulable(sim, "worker-2"));
    const uncordon = await kubectl(kc, "uncordon", "worker-2");
    assertEquals(uncordon.code, 0, uncordon.err);
    assertMatch(uncordon.out, /worker-2 uncordoned/);
    assert(!unschedulable(sim, "worker-2"));
    assertEquals(sim.stats.byVerb.patch, 2);
  });
});

Deno.test("kubectl drain is held back by a 0-disruption PDB and completes once the budget allows", async () => {
  // Every request moves virtual time 5 s, so kubectl's 1 s pod polling lets pods finish terminating.
  await withSim(5000, async (sim, kc) => {
    const drain = kubectl(
      kc,
      "drain",
      "worker-1",
      "--ignore-daemonsets",
      "--delete-emptydir-data",
      "--timeout=120s",
    );
    const safety = setTimeout(() => sim.close(), 90_000);
    await sim.waitFor((s) => s.evictions.blocked >= 1);
    const pods = sim.store.list(sim.controllers.pods, "database");
    const primary = pods.find((p) => p.metadata.name === "postgres18-1")!;
    assertEquals((primary.spec as { nodeName: string }).nodeName, "worker-1");
    assert(primary.metadata.deletionTimestamp === undefined, "blocked pod must not be terminating");
    // The operator fails the primary over: the PDB now selects nobody healthy on worker-1.
    const pdbType = sim.controllers.pdbs;
    const pdb = sim.store.get(pdbType, "database", "postgres18-primary")!;
    sim.store.put(pdbType, { ...pdb, spec: { ...(pdb.spec as object), minAvailable: 0 } });
    const res = await drain;
    clearTimeout(safety);
    assertEquals(res.code, 0, res.err + res.out);
    assertMatch(res.out, /node\/worker-1 drained/);
    assertMatch(
      res.err + res.out,
      /Cannot evict pod as it would violate the pod's disruption budget/,
    );
    const left = sim.store.list(sim.controllers.pods).filter((p) =>
      (p.spec as { nodeName?: string }).nodeName === "worker-1" &&
      !(p.metadata.ownerReferences ?? []).some((o) => o.kind === "DaemonSet")
    );
    assertEquals(left.map((p) => p.metadata.name), []);
    assert(unschedulable(sim, "worker-1"));
    assert(sim.stats.evictions.blocked >= 1 && sim.stats.evictions.accepted >= 2);
  });
});
