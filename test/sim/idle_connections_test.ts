/**
 * The twin's HTTP/1.1 servers (control, registry, Kubernetes API) keep an idle keep-alive
 * connection open longer than clients pool it. With Node's 5 s default, a pooled connection
 * reused as the server closes it fails the request before the server sees it; a twin read that
 * failed that way once left a demo step unresolved. The wall clock is the point here: the test
 * holds a connection idle past Node's default and sends a second request on it.
 */
import { ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { startTwinProcess, TEST_PKI_CACHE } from "../../src/app/twin_process.ts";
import { IDLE_CONNECTION_MS } from "../../src/sim/idle_connections.ts";
import { ROOT } from "../_helpers/twin_world.ts";

/** Past Node's 5 s default idle bound, well inside ours. */
const IDLE_WAIT_MS = 6_000;

type Conn = Deno.Conn | Deno.TlsConn;

async function request(conn: Conn, path: string): Promise<string> {
  const req = `GET ${path} HTTP/1.1\r\nHost: twin\r\nConnection: keep-alive\r\n\r\n`;
  await conn.write(new TextEncoder().encode(req));
  // Read until the headers and a Content-Length body (or a chunked terminator) are in.
  let text = "";
  const buf = new Uint8Array(64 * 1024);
  while (true) {
    const n = await conn.read(buf);
    if (n === null) return text.length ? text : "EOF";
    text += new TextDecoder().decode(buf.subarray(0, n));
    const head = text.indexOf("\r\n\r\n");
    if (head < 0) continue;
    const length = /content-length:\s*(\d+)/i.exec(text.slice(0, head));
    if (length && text.length - head - 4 >= Number(length[1])) return text;
    if (!length && text.endsWith("0\r\n\r\n")) return text;
  }
}

async function staysOpen(name: string, conn: Conn, path: string): Promise<void> {
  try {
    const first = await request(conn, path);
    assert(first.startsWith("HTTP/1.1 "), `${name}: first answer ${first.slice(0, 80)}`);
    await new Promise((r) => setTimeout(r, IDLE_WAIT_MS));
    const second = await request(conn, path).catch((e) => `error ${e}`);
    assert(
      second.startsWith("HTTP/1.1 "),
      `${name}: a connection idle for ${IDLE_WAIT_MS} ms was closed by the server (${
        second.slice(0, 80)
      })`,
    );
  } finally {
    conn.close();
  }
}

Deno.test("the twin's HTTP servers keep an idle keep-alive connection open past Node's 5 s default", async () => {
  assert(IDLE_CONNECTION_MS > 90_000, "longer than Deno's fetch pool keeps an idle connection");
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const at = (url: string) => {
      const u = new URL(url);
      return { hostname: u.hostname, port: Number(u.port) };
    };
    const pki = join(TEST_PKI_CACHE, "kube");
    const read = (f: string) => Deno.readTextFile(join(pki, f));
    const kube = await Deno.connectTls({
      ...at(twin.kubeUrl!),
      caCerts: [await read("ca.crt")],
      cert: await read("client-admin.crt"),
      key: await read("client-admin.key"),
    });
    await Promise.all([
      Deno.connect(at(twin.controlUrl)).then((c) => staysOpen("control", c, "/state")),
      Deno.connect(at(twin.registry.url)).then((c) => staysOpen("registry", c, "/v2/")),
      staysOpen("kubernetes", kube, "/version"),
    ]);
  } finally {
    await twin.stop();
  }
});
