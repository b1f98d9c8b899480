/**
 * Webhook notifications reach a real HTTP server on loopback in each format (generic JSON, Slack,
 * Matrix); a target that is down is logged as NotificationFailed and never throws.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { WebhookNotifier } from "../../../src/adapters/notify/webhook_notifier.ts";
import type { Notification } from "../../../src/domain/ops/notification.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const N: Notification = {
  event: "hold",
  plan: "talos-v1.14.2",
  digest: "a".repeat(64),
  cluster: "home-ops",
  node: "worker-2",
  reason: "MaintenanceWindowClosed",
  text: "outside every maintenance window; next window 2026-12-02T09:00:00.000Z <soon>",
  atMs: Date.parse("2026-12-01T10:00:00Z"),
};

Deno.test("each target gets its own payload shape over HTTP POST", async () => {
  const got: Array<{ path: string; body: unknown }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    got.push({ path: new URL(r.url).pathname, body: await r.json() });
    return new Response("ok");
  });
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const log = new MemoryLogger();
    await new WebhookNotifier([
      { url: `${base}/json`, format: "json" },
      { url: `${base}/slack`, format: "slack" },
      { url: `${base}/matrix`, format: "matrix" },
    ], log).notify(N);
    const by = new Map(got.map((g) => [g.path, g.body]));
    assertEquals(by.get("/json"), {
      source: "cairn",
      event: "hold",
      plan: "talos-v1.14.2",
      digest: "a".repeat(64),
      cluster: "home-ops",
      node: "worker-2",
      reason: "MaintenanceWindowClosed",
      text: N.text,
      at: "2026-12-01T10:00:00.000Z",
    });
    const line = "cairn: plan talos-v1.14.2 held on worker-2 (MaintenanceWindowClosed): " +
      "outside every maintenance window; next window 2026-12-02T09:00:00.000Z ";
    assertEquals(by.get("/slack"), { text: `${line}&lt;soon&gt;` });
    assertEquals(by.get("/matrix"), { msgtype: "m.text", body: `${line}<soon>` });
  } finally {
    await server.shutdown();
  }
});

Deno.test("a target that is down is logged, never thrown, and never named with its path", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("no", { status: 500 }),
  );
  const port = server.addr.port;
  await server.shutdown();
  const log = new MemoryLogger();
  await new WebhookNotifier(
    [{ url: `http://127.0.0.1:${port}/services/T000/B000/secret-token`, format: "slack" }],
    log,
  ).notify(N);
  const text = JSON.stringify(log.entries);
  assert(text.includes("NotificationFailed"), text);
  assert(!text.includes("secret-token"), text);
});
