/**
 * Runs the Talos contract against the twin: the simulator in a Node process built from the
 * bundle (never a Deno http2 server), reached through cairn's grpc-js client over mutual TLS
 * with the talosconfig the twin wrote (Ed25519 keys under the `ED25519 PRIVATE KEY` label).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../../src/app/twin_process.ts";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import { createGrpcTalos, type GrpcTalos } from "../../src/adapters/talos/grpc_talos.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { CTRD, INSTALLER, TALOS_CONTRACT, type TalosContractEnv } from "./talos_contract.ts";

const CLUSTER = fileURLToPath(new URL("../../fixtures/clusters/talos-mini.yaml", import.meta.url));

async function withTwin(fn: (env: TalosContractEnv, twin: TwinProcess) => Promise<void>) {
  // The contract drives virtual time itself (install locks, reboots), so no auto-advance.
  const twin = await startTwinProcess({
    cluster: CLUSTER,
    pkiCacheDir: TEST_PKI_CACHE,
    manualTime: true,
  });
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
    assertEquals(ctx.nodes, ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.21", "10.0.0.22"]);
    const raw = /key: (\S+)/.exec(text)![1]!;
    assert(Buffer.from(raw, "base64").toString().startsWith("-----BEGIN ED25519 PRIVATE KEY-----"));
    assert(ctx.keyPem.startsWith("-----BEGIN PRIVATE KEY-----"));
  });
});

for (const [name, run] of Object.entries(TALOS_CONTRACT)) {
  Deno.test(`Talos contract on the twin: ${name}`, () => withTwin((env) => run(env)));
}

async function kubeNode(kubeconfig: string, name: string) {
  const out = await new Deno.Command(Deno.env.get("CAIRN_KUBECTL") ?? "kubectl", {
    args: ["--kubeconfig", kubeconfig, "get", "node", name, "-o", "json"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const node = JSON.parse(new TextDecoder().decode(out.stdout));
  const ready = node.status.conditions.find((c: { type: string }) => c.type === "Ready").status;
  return { ready, info: node.status.nodeInfo };
}

Deno.test("a Talos reboot shows on the Kubernetes side: NotReady, then Ready with new boot facts", async () => {
  await withTwin(async (env, twin) => {
    const kc = twin.kubeconfigPath!;
    const pull = env.admin.pull("worker-1", INSTALLER, CTRD, { timeoutMs: 5000 });
    await env.control.waitForCalls("ImageService/Pull", 1);
    await env.control.advance(15_000);
    assertEquals((await pull).outcome, "ok");
    const up = env.admin.upgrade("worker-1", INSTALLER, CTRD, { timeoutMs: 5000 });
    await env.control.waitForCalls("LifecycleService/Upgrade", 1);
    await env.control.advance(40_000);
    assertEquals((await up).outcome, "ok");
    const before = await kubeNode(kc, "worker-1");
    assertEquals(before.ready, "True");
    assertEquals(before.info.osImage, "Talos (v1.13.9)");
    assertEquals(
      (await env.admin.reboot("worker-1", "DEFAULT", { timeoutMs: 5000 })).outcome,
      "ok",
    );
    await env.control.advance(5_000);
    assertEquals((await kubeNode(kc, "worker-1")).ready, "Unknown");
    await env.control.advance(120_000);
    const after = await kubeNode(kc, "worker-1");
    assertEquals(after.ready, "True");
    assertEquals(after.info.osImage, "Talos (v1.14.2)");
    assertEquals(after.info.kubeletVersion, "v1.35.2");
    assertEquals(after.info.bootID, await env.admin.bootId("worker-1", { timeoutMs: 5000 }));
    assert(after.info.bootID !== before.info.bootID);
  });
});

Deno.test("`nodes` one-to-many metadata: aggregated for MachineService, INVALID_ARGUMENT for ImageService", async () => {
  await withTwin(async (_env, twin) => {
    const grpc = await import("@grpc/grpc-js");
    const loader = await import("@grpc/proto-loader");
    const protoDir = fileURLToPath(new URL("../../proto/", import.meta.url));
    const def = loader.loadSync(["machine/machine.proto", "machine/image.proto"], {
      includeDirs: [protoDir],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const ctx = await loadTalosconfig(twin.talosconfigPath);
    const creds = grpc.credentials.createSsl(
      Buffer.from(ctx.caPem),
      Buffer.from(ctx.keyPem),
      Buffer.from(ctx.crtPem),
    );
    const client = new grpc.Client(twin.talosEndpoint, creds, {
      "grpc.ssl_target_name_override": "localhost",
    });
    const md = new grpc.Metadata();
    md.set("nodes", "cp-3,worker-1");
    // deno-lint-ignore no-explicit-any
    const method = (svc: string, name: string) => (def[`machine.${svc}`] as any)[name];
    const version = method("MachineService", "Version");
    // deno-lint-ignore no-explicit-any
    const reply: any = await new Promise((resolve, reject) =>
      client.makeUnaryRequest(
        version.path,
        version.requestSerialize,
        version.responseDeserialize,
        {},
        md,
        (err, v) => err ? reject(err) : resolve(v),
      )
    );
    assertEquals(
      // deno-lint-ignore no-explicit-any
      reply.messages.map((m: any) => [m.metadata.hostname, m.version.tag]),
      [["cp-3", "v1.14.2"], ["worker-1", "v1.13.9"]],
    );
    const pull = method("ImageService", "Pull");
    const code = await new Promise<number>((resolve) => {
      const call = client.makeServerStreamRequest(
        pull.path,
        pull.requestSerialize,
        pull.responseDeserialize,
        { containerd: CTRD, image_ref: INSTALLER },
        md,
      );
      call.on("error", () => {});
      call.on("status", (s) => resolve(s.code));
    });
    assertEquals(code, grpc.status.INVALID_ARGUMENT);
    client.close();
  });
});
