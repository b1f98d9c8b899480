// The Kube contract through @kubernetes/client-node against the simulator over mutual TLS, plus
// the boundary's error translation (401, unreachable, bad kubeconfig).
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { tmpdir } from "node:os";
import {
  createClientNodeKube,
  DEFAULT_FIELD_MANAGER,
} from "../../../src/adapters/kube/client_node_kube.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { CAIRN_FIELD_MANAGER } from "../../../src/engine/cordon_ownership.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { startKubeSim, writeKubeconfig } from "../../../src/sim/kube/server.ts";
import { mintPki, type Pki } from "../../../src/sim/pki.ts";
import { kubeContract, type KubeFactory } from "../../contract/kube_contract.ts";
import { kubeWorld } from "../../_helpers/kube_world.ts";

const dir = mkdtempSync(join(tmpdir(), "cairn-kube-"));
let pki: Pki | undefined;
// One PKI for the whole file: minting with openssl is the slow part of a harness.
const certs = () =>
  pki ??= mintPki({
    dir,
    caName: "kubernetes",
    algorithm: "p256",
    clients: { admin: ["system:masters"], rotated: ["system:masters"] },
  });
globalThis.addEventListener("unload", () => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
const factory: KubeFactory = async (description, opts) => {
  const { ca, server, clients } = certs();
  const clock = new SimClock(Date.parse(description.spec.startTime));
  const faults = new FaultSchedule();
  const sim = await startKubeSim({
    clock,
    faults,
    description,
    tls: { caPem: ca.certPem, certPem: server.certPem, keyPem: server.keyPem },
    ...(opts.historySize !== undefined ? { historySize: opts.historySize } : {}),
  });
  const kubeconfigPath = join(dir, `kubeconfig-${seq++}`);
  writeKubeconfig(kubeconfigPath, {
    url: sim.url,
    caPem: ca.certPem,
    clientCertPem: clients.admin!.certPem,
    clientKeyPem: clients.admin!.keyPem,
  });
  const kube = await createClientNodeKube({ kubeconfigPath, pageSize: opts.pageSize });
  return { kube, sim, clock, faults, dispose: () => sim.close() };
};

kubeContract("client-node", factory);

async function rejectsWith(p: Promise<unknown>, reason: string): Promise<CairnError> {
  let err: CairnError | undefined;
  await rejects(p, (e: unknown) => {
    assert(e instanceof CairnError, String(e));
    assertEquals(e.reason, reason, e.message);
    err = e;
    return true;
  });
  return err!;
}

Deno.test("client-node: writes use the field manager the engine reads cordon ownership from", () => {
  assertEquals(DEFAULT_FIELD_MANAGER, CAIRN_FIELD_MANAGER);
});

Deno.test("client-node: a kubeconfig without a client certificate is refused as KubeUnauthorized", async () => {
  const { ca, server } = certs();
  const d = kubeWorld();
  const sim = await startKubeSim({
    clock: new SimClock(Date.parse(d.spec.startTime)),
    faults: new FaultSchedule(),
    description: d,
    tls: { caPem: ca.certPem, certPem: server.certPem, keyPem: server.keyPem },
  });
  try {
    const path = join(dir, "kubeconfig-anon");
    writeKubeconfig(path, { url: sim.url, caPem: ca.certPem });
    const kube = await createClientNodeKube({ kubeconfigPath: path });
    const e = await rejectsWith(kube.listNodes(), "KubeUnauthorized");
    assertEquals(e.details.httpStatus, 401);
    await rejectsWith(kube.cordon("w-1", "1"), "KubeUnauthorized");
    await rejectsWith(kube.evict({ namespace: "apps", name: "x" }), "KubeUnauthorized");
    assertEquals(sim.stats.mutating, 1, "only the eviction got as far as the server");
  } finally {
    await sim.close();
  }
});

Deno.test("client-node: a server that is not listening is KubeUnreachable; a broken kubeconfig is KubeconfigInvalid", async () => {
  const { ca } = certs();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const path = join(dir, "kubeconfig-closed");
  writeKubeconfig(path, { url: `https://127.0.0.1:${port}`, caPem: ca.certPem, token: "t" });
  const kube = await createClientNodeKube({ kubeconfigPath: path });
  await rejectsWith(kube.getNode("w-1"), "KubeUnreachable");
  const end = await kube.watch(
    { group: "", version: "v1", plural: "nodes", namespaced: false },
    { resourceVersion: "1" },
    () => {},
  );
  assertEquals(end.kind === "failed" && end.reason, "KubeUnreachable");
  await rejectsWith(createClientNodeKube({ kubeconfigYaml: "clusters: [" }), "KubeconfigInvalid");
});

/**
 * A bare HTTPS API that answers GET of a Node and POST of an object, counting TLS connections;
 * `dropSecond` destroys a kept-alive connection when a second request arrives on it (as a server
 * closing an idle connection just as the client reuses it).
 */
async function countingApi(o: { dropSecond: boolean; kubeconfigYaml?: (url: string) => string }) {
  const { ca, server: cert, clients } = certs();
  const stats = { connections: 0, requests: 0, dropped: 0 };
  const server = createHttpsServer(
    { cert: cert.certPem, key: cert.keyPem, ca: ca.certPem, requestCert: true },
    (req, res) => {
      stats.requests++;
      const socket = req.socket as typeof req.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      if (o.dropSecond && socket.served === 2) {
        stats.dropped++;
        socket.destroy();
        return;
      }
      res.setHeader("content-type", "application/json");
      if (req.method === "POST") {
        res.statusCode = 201;
        res.end(JSON.stringify({ metadata: { name: "x", resourceVersion: "2" } }));
        return;
      }
      res.end(JSON.stringify({
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "worker-1", resourceVersion: "1", labels: {} },
        spec: {},
        status: { conditions: [{ type: "Ready", status: "True" }] },
      }));
    },
  );
  server.on("secureConnection", () => stats.connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const kubeconfigPath = join(dir, `kubeconfig-counting-${seq++}`);
  const url = `https://127.0.0.1:${port}`;
  if (o.kubeconfigYaml) writeFileSync(kubeconfigPath, o.kubeconfigYaml(url));
  else {
    writeKubeconfig(kubeconfigPath, {
      url,
      caPem: ca.certPem,
      clientCertPem: clients.admin!.certPem,
      clientKeyPem: clients.admin!.keyPem,
    });
  }
  const kube = await createClientNodeKube({ kubeconfigPath });
  return {
    kube,
    stats,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

Deno.test("client-node: reads share one kept-alive TLS connection; a write opens its own", async () => {
  const api = await countingApi({ dropSecond: false });
  try {
    for (let i = 0; i < 5; i++) {
      assertEquals((await api.kube.getNode("worker-1"))?.name, "worker-1");
    }
    assertEquals(api.stats.connections, 1, "five reads, one TLS connection");
    const created = await api.kube.createObject(
      { group: "", version: "v1", plural: "configmaps", namespaced: true },
      "default",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" } },
    );
    assertEquals(created.kind, "created");
    assertEquals(api.stats.connections, 2, "the write did not ride the readers' connection");
  } finally {
    await api.close();
  }
});

Deno.test("client-node: a read whose kept-alive connection the server drops is sent again on a new one", async () => {
  const api = await countingApi({ dropSecond: true });
  try {
    assertEquals((await api.kube.getNode("worker-1"))?.name, "worker-1");
    assertEquals((await api.kube.getNode("worker-1"))?.name, "worker-1");
    assertEquals(api.stats.dropped, 1, "the second read met the dropped connection");
    assertEquals(api.stats.requests, 3, "and was sent once more");
  } finally {
    await api.close();
  }
});

Deno.test("client-node: a client certificate rotated on disk gets a kept-alive connection of its own", async () => {
  const { ca, clients } = certs();
  const certFile = join(dir, `rotating-${seq}.crt`), keyFile = join(dir, `rotating-${seq}.key`);
  const use = (c: { certPem: string; keyPem: string }) => {
    writeFileSync(certFile, c.certPem);
    writeFileSync(keyFile, c.keyPem, { mode: 0o600 });
  };
  use(clients.admin!);
  // The kubeconfig names files, which client-node reads again for every request.
  const api = await countingApi({
    dropSecond: false,
    kubeconfigYaml: (url) =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "c",
          cluster: { server: url, "certificate-authority-data": btoa(ca.certPem) },
        }],
        users: [{ name: "u", user: { "client-certificate": certFile, "client-key": keyFile } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
  });
  try {
    for (let i = 0; i < 3; i++) await api.kube.getNode("worker-1");
    assertEquals(api.stats.connections, 1, "one identity, one connection");
    use(clients.rotated!);
    for (let i = 0; i < 3; i++) await api.kube.getNode("worker-1");
    assertEquals(api.stats.connections, 2, "the rotated certificate is never sent on the old one");
  } finally {
    await api.close();
  }
});
