/**
 * The socket twin serves the Talos stale and missed reads the simulation campaign draws in process
 * (`sim/talos/stale_reads.ts`, shared by `server.ts` and `sim/inproc/talos.ts`), through cairn's
 * real gRPC adapter over mTLS: a `stale-read` answers a machine's version or service list with
 * the answer it gave one read earlier, only for the fault's count and only with an answer the
 * machine really gave; a `stream-skips-events` read of the boot id is unreadable, never a boot id.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { withHomeOpsTwin } from "../../_helpers/twin_world.ts";

const O = { timeoutMs: 10_000 };

Deno.test("socket twin: a stale version read answers the machine's previous version, for its count only", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    const before = (await cluster.talos.version("worker-1", O)).tag;
    await control.setNode("worker-1", { runningVersion: "v1.14.2" });
    await control.arm({
      kind: "stale-read",
      point: "talos.Version",
      target: "worker-1",
      count: 1,
      params: { lag: 1 },
    });
    // Another machine's reads are its own.
    assertEquals((await cluster.talos.version("worker-2", O)).tag, before);
    assertEquals((await cluster.talos.version("worker-1", O)).tag, before, "the stale answer");
    assertEquals((await cluster.talos.version("worker-1", O)).tag, "v1.14.2", "count spent");
    const f = await control.faults();
    assertEquals(f.remaining, []);
    assertEquals(f.fired.length, 1);
  });
});

Deno.test("socket twin: a stale service list shows the services as the machine last answered them", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    const state = async () =>
      (await cluster.talos.serviceList("worker-1", O)).find((s) => s.id === "kubelet");
    const healthy = await state();
    assert(healthy, "the kubelet is listed");
    await control.setNode("worker-1", {
      services: { kubelet: { healthy: false, state: "Failed", lastMessage: "exited" } },
    });
    await control.arm({
      kind: "stale-read",
      point: "talos.ServiceList",
      target: "worker-1",
      count: 1,
      params: { lag: 1 },
    });
    assertEquals(await state(), healthy, "the stale answer");
    const fresh = await state();
    assertEquals([fresh?.state, fresh?.healthy], ["Failed", false]);
  });
});

Deno.test("socket twin: a boot-id read whose stream skips its data is unreadable, never a boot id", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    const id = await cluster.talos.bootId("worker-1", O);
    await control.arm({ kind: "stream-skips-events", point: "talos.Read", target: "worker-1" });
    const missed = await cluster.talos.bootId("worker-1", O).then(
      (x) => `read ${x}`,
      (e: Error) => e.message,
    );
    assert(/boot id read back/.test(missed), missed);
    assertEquals(await cluster.talos.bootId("worker-1", O), id, "the next read is whole");
  });
});
