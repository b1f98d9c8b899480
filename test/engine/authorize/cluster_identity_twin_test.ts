/**
 * The cluster's identity comes from the cluster: Talos's `Infos.cluster.talos.dev/current` read over
 * COSI `State.Get` through the real gRPC adapter, served by the twin from its cluster description.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { startTwinCluster } from "../../../src/app/twin_cluster.ts";
import { TEST_PKI_CACHE } from "../../../src/app/twin_process.ts";
import { talosClusterIdentity } from "../../../src/engine/authorize/cluster_identity.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

Deno.test("the twin's nodes report their cluster's name and id through COSI State.Get", async () => {
  const tc = await startTwinCluster({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const identity = talosClusterIdentity(tc.cluster.talos, 10_000);
    for (const node of ["worker-1", "cp-3"]) {
      const seen = await identity.read(node);
      assertEquals([seen.name, seen.id], ["home-ops", "twin-home-ops"]);
      assert(seen.source.includes(`Infos.cluster.talos.dev/current read from ${node}`));
    }
    await rejects(() => identity.read("no-such-node"), /no route to host/);
    const stats = await tc.control.stats();
    assertEquals(stats.talos.totalMutating, 0, "reading the identity changes nothing");
  } finally {
    await tc.stop();
  }
});
