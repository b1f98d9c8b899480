/**
 * Runs the Talos contract against the twin: the simulator in a Node process built from the
 * bundle (never a Deno http2 server), reached through cairn's grpc-js client over mutual TLS
 * with the talosconfig the twin wrote (Ed25519 keys under the `ED25519 PRIVATE KEY` label).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  startTwinProcess,
  TEST_PKI_CACHE,
  type TwinProcess,
} from "../../src/cli/sim_serve.ts";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import { createGrpcTalos, type GrpcTalos } from "../../src/adapters/talos/grpc_talos.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { TALOS_CONTRACT, type TalosContractEnv } from "./talos_contract.ts";

const CLUSTER = fileURLToPath(new URL("../../fixtures/clusters/talos-mini.yaml", import.meta.url));

async function withTwin(fn: (env: TalosContractEnv, twin: TwinProcess) => Promise<void>) {
  const twin = await startTwinProcess({ cluster: CLUSTER, pkiCacheDir: TEST_PKI_CACHE });
  const clients: GrpcTalos[] = [];
  const client = async (suffix: string) => {
    const c = await createGrpcTalos({
      context: await loadTalosconfig(twin.talosconfigPath, `talos-mini${suffix}`),
    });
    clients.push(c);
    return c;
  };
  try {
    await fn({
      admin: await client(""),
      operator: await client("-operator"),
      reader: await client("-reader"),
      control: new TwinControl(twin.controlUrl),
    }, twin);
  } finally {
    for (const c of clients) c.close();
    await twin.stop();
  }
}

Deno.test("twin writes a talosconfig with base64 PEM and the Talos Ed25519 key label", async () => {
  await withTwin(async (_env, twin) => {
    const text = readFileSync(twin.talosconfigPath, "utf8");
    assert(text.includes("context: talos-mini\n"));
    const ctx = await loadTalosconfig(twin.talosconfigPath, "talos-mini-reader");
    assertEquals(ctx.endpoints, [twin.talosEndpoint]);
    assertEquals(ctx.nodes, ["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"]);
    const raw = /key: (\S+)/.exec(text)![1]!;
    assert(Buffer.from(raw, "base64").toString().startsWith("-----BEGIN ED25519 PRIVATE KEY-----"));
    assert(ctx.keyPem.startsWith("-----BEGIN PRIVATE KEY-----"));
  });
});

for (const [name, run] of Object.entries(TALOS_CONTRACT)) {
  Deno.test(`Talos contract on the twin: ${name}`, () => withTwin((env) => run(env)));
}
