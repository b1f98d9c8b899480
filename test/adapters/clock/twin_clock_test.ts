// TwinClock against a stand-in control endpoint: the clock reads `/now` after port calls, and
// concurrent readings are shared without ever answering a caller from a reading that left
// before its call ended.
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { TwinClock } from "../../../src/adapters/clock/twin_clock.ts";

/** A control endpoint whose time the test sets; `/now` readings can be held back. */
function controlStandIn() {
  const s = {
    nowMs: 1_000,
    readings: 0,
    paths: new Set<string>(),
    hold: undefined as Promise<void> | undefined,
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    s.paths.add(path);
    if (path !== "/now") return new Response("{}", { status: 404 });
    s.readings++;
    // The time as it was when the request arrived, whatever happens while it is held.
    const nowMs = s.nowMs;
    await s.hold;
    return Response.json({ nowMs });
  });
  return { s, url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("twin clock: concurrent readings are shared, and a reading that left before a call ended never answers for it", async () => {
  const c = controlStandIn();
  try {
    const clock = await TwinClock.connect(c.url);
    assertEquals(clock.now(), 1_000);
    let release!: () => void;
    c.s.hold = new Promise((r) => (release = r));
    const early = clock.sync();
    // Let the first reading reach the endpoint, then a port call moves the twin's time.
    while (c.s.readings < 2) await new Promise((r) => setTimeout(r, 5));
    c.s.nowMs = 2_000;
    const late = Array.from({ length: 50 }, () => clock.sync());
    c.s.hold = undefined;
    release();
    assertEquals(await early, 1_000);
    assertEquals(new Set(await Promise.all(late)), new Set([2_000]), "read after the call");
    assertEquals(c.s.readings, 3, "connect, the early reading, one shared by the fifty");
    assertEquals([...c.s.paths], ["/now"], "the time alone, never the node list");
  } finally {
    await c.close();
  }
});
