import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { createHmac } from "node:crypto";
import { type GitHook, startOpsServer } from "../../../src/adapters/http/ops_server.ts";
import { createCairnMetrics } from "../../../src/adapters/metrics/cairn_metrics.ts";
import { parseExposition } from "../metrics/prom_text_checker.ts";

const SECRET = "test-only-hook-secret";

async function withServer(
  opts: { secret?: string; maxHookBytes?: number },
  body: (ctx: { url: string; hooks: GitHook[]; state: { ready: boolean } }) => Promise<void>,
) {
  const hooks: GitHook[] = [];
  const state = { ready: false };
  const metrics = createCairnMetrics({ version: "0.1.0" });
  metrics.healthRound("pass");
  const server = await startOpsServer({
    port: 0,
    metrics,
    readiness: () => state.ready ? { ready: true } : { ready: false, why: "journal not open" },
    onGitHook: (h) => void hooks.push(h),
    hookSecret: opts.secret ?? SECRET,
    ...(opts.maxHookBytes !== undefined ? { maxHookBytes: opts.maxHookBytes } : {}),
  });
  try {
    assert(server.url.startsWith("http://127.0.0.1:"));
    assert(server.port > 0);
    await body({ url: server.url, hooks, state });
  } finally {
    await server.close();
  }
}

async function call(url: string, init?: RequestInit): Promise<[number, string, Headers]> {
  const res = await fetch(url, init);
  return [res.status, await res.text(), res.headers];
}

Deno.test("ops server serves /metrics as valid Prometheus text and /healthz", async () => {
  await withServer({}, async ({ url }) => {
    const [status, text, headers] = await call(`${url}/metrics`);
    assertEquals(status, 200);
    assertEquals(headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const fams = parseExposition(text);
    assertEquals(fams.get("cairn_health_rounds_total")!.samples[0]!.value, 1);
    assertEquals((await call(`${url}/healthz`))[0], 200);
  });
});

Deno.test("ops server /readyz answers 503 with the reason until ready, then 200", async () => {
  await withServer({}, async ({ url, state }) => {
    const [s1, b1] = await call(`${url}/readyz`);
    assertEquals([s1, JSON.parse(b1)], [503, { ready: false, why: "journal not open" }]);
    state.ready = true;
    const [s2, b2] = await call(`${url}/readyz`);
    assertEquals([s2, JSON.parse(b2)], [200, { ready: true }]);
    state.ready = false;
    assertEquals((await call(`${url}/readyz`))[0], 503);
  });
});

Deno.test("ops server answers 404 for unknown paths and 405 for wrong methods", async () => {
  await withServer({}, async ({ url }) => {
    assertEquals((await call(`${url}/`))[0], 404);
    assertEquals((await call(`${url}/metrics/x`))[0], 404);
    const [status, , headers] = await call(`${url}/metrics`, { method: "POST", body: "x" });
    assertEquals([status, headers.get("allow")], [405, "GET"]);
    assertEquals((await call(`${url}/hooks/git`))[0], 405);
  });
});

Deno.test("ops server refuses to start a hook handler without a non-empty secret", async () => {
  for (const hookSecret of [undefined, ""]) {
    await rejects(
      startOpsServer({
        port: 0,
        metrics: { render: () => "" },
        readiness: () => ({ ready: true }),
        onGitHook: () => {},
        ...(hookSecret !== undefined ? { hookSecret } : {}),
      }),
      (e: { reason?: string }) => e.reason === "ConfigInvalid",
    );
  }
});

Deno.test("POST /hooks/git with a valid signature passes the body and event on", async () => {
  await withServer({ secret: SECRET }, async ({ url, hooks }) => {
    const body = '{"ref":"refs/heads/main"}';
    const [status] = await call(`${url}/hooks/git`, {
      method: "POST",
      headers: {
        "x-github-event": "push",
        "x-hub-signature-256": "sha256=" + createHmac("sha256", SECRET).update(body).digest("hex"),
      },
      body,
    });
    assertEquals(status, 202);
    assertEquals(hooks.length, 1);
    assertEquals(new TextDecoder().decode(hooks[0]!.body), '{"ref":"refs/heads/main"}');
    assertEquals(hooks[0]!.event, "push");
  });
});

Deno.test("POST /hooks/git with a secret refuses a missing or wrong token and accepts the right one", async () => {
  await withServer({ secret: SECRET }, async ({ url, hooks }) => {
    const post = (headers: Record<string, string>) =>
      call(`${url}/hooks/git`, { method: "POST", headers, body: "{}" });
    assertEquals((await post({}))[0], 401);
    assertEquals((await post({ "x-cairn-token": "wrong" }))[0], 401);
    assertEquals((await post({ "x-cairn-token": SECRET + "x" }))[0], 401);
    assertEquals((await post({ "x-cairn-token": SECRET.slice(0, -1) }))[0], 401);
    assertEquals(hooks.length, 0);
    assertEquals((await post({ "x-cairn-token": SECRET }))[0], 202);
    assertEquals(hooks.length, 1);
  });
});

Deno.test("POST /hooks/git with a secret checks the X-Hub-Signature-256 HMAC of the exact body", async () => {
  await withServer({ secret: SECRET }, async ({ url, hooks }) => {
    const body = '{"ref":"refs/heads/plan-x"}';
    const good = "sha256=" + createHmac("sha256", SECRET).update(body).digest("hex");
    const other = "sha256=" + createHmac("sha256", SECRET).update(body + " ").digest("hex");
    const post = (sig: string) =>
      call(`${url}/hooks/git`, { method: "POST", headers: { "x-hub-signature-256": sig }, body });
    assertEquals((await post(other))[0], 401);
    assertEquals((await post("sha1=abc"))[0], 401);
    assertEquals((await post(good))[0], 202);
    assertEquals(hooks.length, 1);
  });
});

Deno.test("POST /hooks/git refuses an oversized body with 413, declared or streamed", async () => {
  await withServer({ maxHookBytes: 1024 }, async ({ url, hooks }) => {
    const big = "x".repeat(1025);
    assertEquals((await call(`${url}/hooks/git`, { method: "POST", body: big }))[0], 413);
    // No Content-Length: a chunked stream must be cut off while reading.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode("y".repeat(400)));
        c.close();
      },
    });
    assertEquals((await call(`${url}/hooks/git`, { method: "POST", body: stream }))[0], 413);
    assertEquals(hooks.length, 0);
    assertEquals(
      (await call(`${url}/hooks/git`, {
        method: "POST",
        headers: { "x-cairn-token": SECRET },
        body: "x".repeat(1024),
      }))[0],
      202,
    );
  });
});

Deno.test("ops server answers 404 on /hooks/git when no hook handler is configured", async () => {
  const server = await startOpsServer({
    port: 0,
    metrics: { render: () => "" },
    readiness: () => ({ ready: true }),
  });
  try {
    assertEquals((await call(`${server.url}/hooks/git`, { method: "POST", body: "{}" }))[0], 404);
  } finally {
    await server.close();
  }
});
