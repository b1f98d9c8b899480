/**
 * The twin's registry in process: cairn's real resolver over the registry model, no socket.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { pinnedInstaller } from "../../../src/domain/oci/installer.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps, startInprocWorld } from "../../_helpers/inproc_world.ts";

const AMD64 = { os: "linux", architecture: "amd64" };

Deno.test("in-process registry: the plan's installer resolves to the digest the plan pins; unknown references are not found", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    const hop = w.bound.plan.spec.hops[0]!;
    const { reference, pinned } = pinnedInstaller(hop);
    const r = await w.twin.registry.resolver.resolve(reference, AMD64);
    assert(r.ok, JSON.stringify(r));
    assertEquals(r.value.indexDigest ?? r.value.digest, pinned);
    assertEquals(r.value.registry, "in-process twin registry (serving factory.talos.dev)");
    const missing = await w.twin.registry.resolver.resolve(
      reference.replace(":v1.14.2", ":v9.9.9"),
      AMD64,
    );
    assert(!missing.ok, JSON.stringify(missing));
    assert(w.twin.registry.stats.notFound > 0);
  } finally {
    await w.close();
  }
});

Deno.test("in-process registry: a rollout's dispatch check resolves every installer there, as pinned", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    assertEquals((await w.run()).state, "completed");
    const events = ((await w.journal.exportAll())["events"] ?? []) as Array<
      { kind: string; body: string }
    >;
    const checks = events.filter((e) => e.kind === "dispatch-check").map((e) =>
      JSON.parse(e.body) as { checks: Array<{ check: string; verdict: string }> }
    );
    assert(checks.length >= 2, "before the rollout and before the node's commitment");
    for (const c of checks) {
      assertEquals(c.checks.find((x) => x.check === "installer")?.verdict, "pass");
    }
    assert(w.twin.registry.stats.manifests > 0, "the registry model answered");
  } finally {
    await w.close();
  }
});

Deno.test("in-process registry: writes are refused, the base endpoint answers", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const f = twin.registry.fetch;
    assertEquals((await f("http://127.0.0.1:5000/v2/")).status, 200);
    const put = await f("http://127.0.0.1:5000/v2/x/manifests/y", { method: "PUT" });
    assertEquals(put.status, 405);
    assertEquals(twin.registry.stats.refusedWrites, 1);
  } finally {
    twin.stop();
  }
});
