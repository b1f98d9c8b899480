/**
 * `cairn sim serve` end to end: the real CLI process starts the twin of the home-ops fixture
 * under Node, prints where the talosconfig and kubeconfig are, both APIs answer real clients
 * (cairn's grpc-js Talos client, the real kubectl), and SIGTERM stops everything with exit 0.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import { createGrpcTalos } from "../../src/adapters/talos/grpc_talos.ts";
import { resolveImage } from "../../src/adapters/oci/registry_client.ts";
import type { TwinRegistryInfo } from "../../src/sim/twin.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function readJsonObject(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const dec = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`cairn sim serve ended before printing JSON: ${text}`);
    text += dec.decode(value);
    try {
      return JSON.parse(text) as Record<string, string | null> & { registry: TwinRegistryInfo };
    } catch { /* not complete yet */ }
  }
}

Deno.test("cairn sim serve runs the home-ops twin, prints both configs and stops on SIGTERM", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "cairn-sim-serve-"));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "src/main.ts",
      "sim",
      "serve",
      "--cluster",
      "fixtures/clusters/home-ops.yaml",
      "--state-dir",
      stateDir,
      "--output",
      "json",
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  try {
    const facts = await readJsonObject(reader);
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
    child.kill("SIGTERM");
    reader.releaseLock();
    await child.stdout.cancel();
  }
  const status = await child.status;
  assertEquals(status.code, 0);
});
