/**
 * `cairn sim serve` end to end: the real CLI process starts the twin of the home-ops fixture
 * under Node, prints where the talosconfig and kubeconfig are, both APIs answer real clients
 * (cairn's grpc-js Talos client, the real kubectl), and SIGTERM stops everything with exit 0.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import { createGrpcTalos } from "../../src/adapters/talos/grpc_talos.ts";
import { resolveImage } from "../../src/adapters/oci/registry_client.ts";
import { startSimServe } from "../_helpers/sim_serve.ts";

Deno.test("cairn sim serve runs the home-ops twin, prints both configs and stops on SIGTERM", async () => {
  const twin = await startSimServe([], "cairn-sim-serve-");
  const { stateDir, facts } = twin;
  let code: number | undefined;
  try {
    assertEquals(facts["talosconfig"], join(stateDir, "talosconfig"));
    assertEquals(facts["kubeconfig"], join(stateDir, "kubeconfig"));
    assert(existsSync(join(stateDir, "twin.json")));
    const talos = await createGrpcTalos({ context: await loadTalosconfig(facts["talosconfig"]!) });
    assertEquals((await talos.version("worker-4", { timeoutMs: 5000 })).tag, "v1.13.9");
    const bootId = await talos.bootId("cp-1", { timeoutMs: 5000 });
    talos.close();
    const kubectl = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
    const out = await new Deno.Command(kubectl, {
      args: ["--kubeconfig", facts["kubeconfig"]!, "get", "node", "cp-1", "-o", "json"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const node = JSON.parse(new TextDecoder().decode(out.stdout));
    // The kube side starts from the Talos side's boot facts.
    assertEquals(node.status.nodeInfo.bootID, bootId);
    assertEquals(node.status.nodeInfo.osImage, "Talos (v1.13.9)");
    // The registry stands in for factory.talos.dev: the images it serves resolve through it.
    const { registry } = facts;
    assertEquals(Object.keys(registry.mirrors), ["factory.talos.dev"]);
    const image = registry.images.find((i) => i.includes(":v1.14.2@"))!;
    const r = await resolveImage(image, { os: "linux", architecture: "amd64" }, {
      mirrors: registry.mirrors,
    });
    assertEquals(r.indexDigest, image.slice(image.indexOf("@") + 1));
  } finally {
    code = await twin.stop();
  }
  assertEquals(code, 0);
});
