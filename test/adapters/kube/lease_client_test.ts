/**
 * The Lease client against the Kubernetes twin over real HTTPS (mutual TLS): create, read,
 * update with the resourceVersion precondition (a stale version is a conflict, a second create
 * too), the API server's validation, the election between two replicas on the wire, and the
 * real kubectl reading the Lease the election wrote.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { createLeaseClient } from "../../../src/adapters/kube/lease_client.ts";
import { LeaderElector } from "../../../src/engine/leadership/elector.ts";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { type KubeSim, startKubeSim, writeKubeconfig } from "../../../src/sim/kube/server.ts";
import { mintPki } from "../../../src/sim/pki.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const FIXTURE = new URL("../../../fixtures/clusters/home-ops.yaml", import.meta.url);

async function withSim(fn: (sim: KubeSim, kubeconfig: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "lease-"));
  const d = ClusterDescriptionSchema.parse(parse(Deno.readTextFileSync(FIXTURE)));
  const pki = mintPki({ dir, caName: "twin-ca", algorithm: "p256", clients: { admin: [] } });
  const sim = await startKubeSim({
    clock: new SimClock(Date.parse(d.spec.startTime)),
    faults: new FaultSchedule(),
    description: d,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
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

const SPEC = { holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 };

Deno.test("Lease create, get and update carry the resourceVersion precondition over HTTPS", async () => {
  await withSim(async (_sim, kubeconfigPath) => {
    const lease = await createLeaseClient({ kubeconfigPath, namespace: "default", name: "l1" });
    assertEquals(await lease.get(), undefined);
    const t = Date.parse("2026-12-01T01:02:03.456Z");
    const created = await lease.create({ ...SPEC, acquireTimeMs: t, renewTimeMs: t });
    assert(created.kind === "written");
    assertEquals(created.lease.spec.renewTimeMs, t, "micro-time round trip");
    assertEquals((await lease.create(SPEC)).kind, "conflict", "a second create loses");
    const rv = created.lease.resourceVersion;
    const renewed = await lease.update({ ...SPEC, renewTimeMs: t + 2_000 }, rv);
    assert(renewed.kind === "written");
    assert(renewed.lease.resourceVersion !== rv);
    // Another writer who read the old version loses the race, and nothing changes.
    const stale = await lease.update({ ...SPEC, holderIdentity: "b", leaseTransitions: 1 }, rv);
    assertEquals(stale.kind, "conflict");
    assertEquals((await lease.get())!.spec.holderIdentity, "a");
    // The API server's validation: a duration of 0 is refused, not stored.
    await lease.update({ ...SPEC, leaseDurationSeconds: 0 }, renewed.lease.resourceVersion).then(
      () => assert(false, "a zero duration was accepted"),
      (e) => assertEquals(e.reason, "KubeInvalidRequest"),
    );
  });
});

Deno.test("two replicas elect one leader over the wire; kubectl get lease shows it", async () => {
  await withSim(async (_sim, kubeconfigPath) => {
    const clock = new SimClock(Date.parse("2026-12-01T00:00:00Z"));
    const replica = async (identity: string) =>
      new LeaderElector({
        store: await createLeaseClient({ kubeconfigPath, namespace: "default", name: "cairn" }),
        clock,
        log: new MemoryLogger(),
        config: {
          identity,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
        },
      });
    const a = await replica("cairn-a"), b = await replica("cairn-b");
    await Promise.all([a.round(), b.round()]);
    const leaders = [a, b].filter((r) => r.term() !== undefined);
    assertEquals(leaders.length, 1, "exactly one leader");
    const holder = leaders[0] === a ? "cairn-a" : "cairn-b";
    const out = await new Deno.Command(KUBECTL, {
      args: ["--kubeconfig", kubeconfigPath, "get", "lease", "cairn", "-n", "default"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    assert(/NAME\s+HOLDER\s+AGE/.test(text), text);
    assert(new RegExp(`^cairn\\s+${holder}\\s`, "m").test(text), text);
    const json = await new Deno.Command(KUBECTL, {
      args: [
        "--kubeconfig",
        kubeconfigPath,
        "get",
        "lease",
        "cairn",
        "-n",
        "default",
        "-o",
        "json",
      ],
      stdout: "piped",
    }).output();
    const spec = JSON.parse(new TextDecoder().decode(json.stdout)).spec;
    assertEquals(spec.holderIdentity, holder);
    assertEquals(spec.leaseDurationSeconds, 15);
    assert(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(spec.renewTime), spec.renewTime);
  });
});
