/**
 * The header lines the real (pinned) kubectl prints from the twin's server-side Tables for the
 * kinds beyond nodes, pods, deployments and PDBs: statefulsets, daemonsets, events and leases,
 * each with `-A` (kubectl adds NAMESPACE in front). The Kubernetes side runs as `cairn sim serve`
 * wires it (workload status, event recorder), in process, on a still virtual clock.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parse } from "yaml";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { startTwinKube } from "../../../src/sim/twin_kube.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const FIXTURE = new URL("../../../fixtures/clusters/home-ops.yaml", import.meta.url);

/** A StatefulSet the fixture lacks, so `get statefulsets` has a row to print. */
const CACHE_STATEFULSET = {
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "cache", namespace: "default" },
  spec: {
    replicas: 2,
    serviceName: "cache",
    selector: { matchLabels: { app: "cache" } },
    template: {
      metadata: { labels: { app: "cache" } },
      spec: { containers: [{ name: "valkey", image: "registry.example/valkey:8" }] },
    },
  },
};

async function kubectl(kubeconfig: string, ...args: string[]) {
  const o = await new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: o.code,
    out: new TextDecoder().decode(o.stdout),
    err: new TextDecoder().decode(o.stderr),
  };
}

/** The header cells, and the rows as cells (kubectl separates columns by 2+ spaces). */
function table(out: string): { head: string[]; rows: string[][] } {
  const [head, ...lines] = out.trimEnd().split("\n").map((l) => l.trim().split(/\s{2,}/));
  return { head: head!, rows: lines };
}

Deno.test("kubectl get statefulsets, daemonsets, events and leases -A print the real apiserver's columns", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "cairn-kube-tables-"));
  const raw = parse(Deno.readTextFileSync(FIXTURE)) as { spec: { objects: unknown[] } };
  raw.spec.objects.push(CACHE_STATEFULSET);
  const description = ClusterDescriptionSchema.parse(raw);
  const kube = await startTwinKube({
    clock: new SimClock(Date.parse(description.spec.startTime)),
    faults: new FaultSchedule(),
    description,
    stateDir,
    pkiCacheDir: undefined,
  });
  const get = async (resource: string) => {
    const r = await kubectl(kube.kubeconfigPath, "get", resource, "-A");
    assertEquals(r.code, 0, r.err);
    return table(r.out);
  };
  try {
    // Cordoning a node records an event, as a real node controller would.
    const cordon = await kubectl(kube.kubeconfigPath, "cordon", "worker-2");
    assertEquals(cordon.code, 0, cordon.err);

    const sts = await get("statefulsets");
    assertEquals(sts.head, ["NAMESPACE", "NAME", "READY", "AGE"]);
    assertEquals(sts.rows.find((r) => r[1] === "cache")?.slice(0, 3), ["default", "cache", "2/2"]);

    const ds = await get("daemonsets");
    assertEquals(ds.head, [
      "NAMESPACE",
      "NAME",
      "DESIRED",
      "CURRENT",
      "READY",
      "UP-TO-DATE",
      "AVAILABLE",
      "NODE SELECTOR",
      "AGE",
    ]);
    assertEquals(
      ds.rows.find((r) => r[1] === "cilium")?.slice(0, 8),
      ["kube-system", "cilium", "7", "7", "7", "7", "7", "<none>"],
    );

    const events = await get("events");
    assertEquals(events.head, ["NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    assertEquals(
      events.rows.find((r) => r[4] === "node/worker-2")?.slice(2, 5),
      ["Normal", "NodeNotSchedulable", "node/worker-2"],
    );

    const leases = await get("leases");
    assertEquals(leases.head, ["NAMESPACE", "NAME", "HOLDER", "AGE"]);
    assertEquals(
      leases.rows.find((r) => r[1] === "worker-1")?.slice(0, 3),
      ["kube-node-lease", "worker-1", "worker-1"],
    );
  } finally {
    await kube.stop();
    Deno.removeSync(stateDir, { recursive: true });
  }
});
