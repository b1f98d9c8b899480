/**
 * The twin's machine identity over its real sockets: every machine has the address the plan
 * declares and an SMBIOS UUID that the Kubernetes Node (`nodeInfo.systemUUID`) and Talos
 * (`SystemInformations.hardware.talos.dev`, read through COSI State.Get at the address) report
 * alike; apid routes `node` by address, a hostname by the address its DNS record holds. The two
 * identity faults change what an address reaches: `address-reused` (another machine answers at
 * it) and `machine-reimaged` (a replacement with the same name and address, a new UUID).
 */
import {
  deepStrictEqual as assertEquals,
  notDeepStrictEqual,
  ok as assert,
} from "node:assert/strict";
import {
  SYSTEM_INFORMATION,
  uuidFromSystemInformation,
} from "../../../src/domain/machine_identity.ts";
import { withHomeOpsTwin } from "../../_helpers/twin_world.ts";

const ADDRESSES: Record<string, string> = {
  "cp-1": "10.5.0.3",
  "cp-2": "10.5.0.4",
  "cp-3": "10.5.0.5",
  "worker-1": "10.5.0.6",
  "worker-2": "10.5.0.7",
  "worker-3": "10.5.0.8",
  "worker-4": "10.5.0.9",
};

const O = { timeoutMs: 10_000 };

Deno.test("both sides of the twin report one SMBIOS UUID per machine, Talos read at the plan's address", async () => {
  await withHomeOpsTwin(async ({ cluster }) => {
    const seen = new Set<string>();
    for (const [name, address] of Object.entries(ADDRESSES)) {
      const node = (await cluster.kube.getNode(name))!;
      const res = await cluster.talos.resource(address, SYSTEM_INFORMATION, O);
      const talos = uuidFromSystemInformation(res.yamlSpec);
      assert(talos.ok, JSON.stringify(talos));
      assertEquals(talos.uuid, node.systemUUID, name);
      assertEquals(node.internalIPs, [address]);
      assert(node.machineID.length === 32, "the kubelet reports a machine-id");
      seen.add(talos.uuid);
    }
    assertEquals(seen.size, 7, "one machine per node");
  });
});

Deno.test("apid routes by address; a hostname reaches the machine its DNS record's address reaches", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    await control.resetStats();
    await cluster.talos.version("10.5.0.8", O);
    await cluster.talos.version("worker-3", O);
    const st = await control.stats();
    assertEquals(st.talos.byNode["worker-3"]?.["MachineService/Version"], 2);
    // An address nobody holds is a dial failure, not a guess.
    await cluster.talos.version("10.5.0.200", O).then(
      () => assert(false, "an unknown address answered"),
      (e: Error) => assert(/no route to host/.test(e.message), e.message),
    );
  });
});

Deno.test("address-reused: from the arm on, worker-1's address answers from worker-2; the Node still says worker-1's machine", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    const w1 = (await cluster.kube.getNode("worker-1"))!.systemUUID;
    const w2 = (await cluster.kube.getNode("worker-2"))!.systemUUID;
    const before = await control.stats();
    await control.arm({
      kind: "address-reused",
      point: "talos.route",
      target: "worker-1",
      params: { by: "worker-2" },
    });
    const at = uuidFromSystemInformation(
      (await cluster.talos.resource("10.5.0.6", SYSTEM_INFORMATION, O)).yamlSpec,
    );
    assertEquals(at, { ok: true, uuid: w2 });
    assertEquals((await cluster.kube.getNode("worker-1"))!.systemUUID, w1);
    // The stale hostname follows the address to the other machine too.
    const byName = await cluster.talos.resource("worker-1", SYSTEM_INFORMATION, O);
    assertEquals(uuidFromSystemInformation(byName.yamlSpec), { ok: true, uuid: w2 });
    const after = await control.stats();
    assertEquals(after.talos.totalMutating, before.talos.totalMutating);
    assertEquals(
      (await control.node("worker-1")).history.at(-1),
      "address 10.5.0.6 now answers from worker-2",
    );
  });
});

Deno.test("machine-reimaged: a replacement with the same name and address reports a new UUID on both sides", async () => {
  await withHomeOpsTwin(async ({ cluster, control }) => {
    const old = (await cluster.kube.getNode("worker-3"))!;
    await control.arm({ kind: "machine-reimaged", point: "talos.machine", target: "worker-3" });
    const now = (await cluster.kube.getNode("worker-3"))!;
    const talos = uuidFromSystemInformation(
      (await cluster.talos.resource("10.5.0.8", SYSTEM_INFORMATION, O)).yamlSpec,
    );
    assertEquals(talos, { ok: true, uuid: now.systemUUID });
    notDeepStrictEqual(now.systemUUID, old.systemUUID);
    notDeepStrictEqual(now.machineID, old.machineID);
    notDeepStrictEqual(now.bootID, old.bootID);
    assertEquals(now.internalIPs, ["10.5.0.8"]);
  });
});
