// deno-lint-ignore-file no-console
/**
 * The Deno grpc-js client survives connection churn against the twin running under Node:
 * 10,000 calls over 100 connections, half closed by the server with GOAWAY while calls are in
 * flight, half closed by the client. Neither process may crash and every read must succeed
 * (reads reconnect and retry on UNAVAILABLE within their deadline).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { runChurn, startTalosTwin } from "../../_helpers/talos_churn.ts";
import { CairnError } from "../../../src/domain/errors.ts";

Deno.test("grpc-js client and Node twin survive 10,000 calls over 100 churned connections", async () => {
  const { twin, control } = await startTalosTwin();
  let exitedEarly = false;
  void twin.exited.then(() => (exitedEarly = true));
  try {
    const r = await runChurn(twin.talosconfigPath, control, 100, 100);
    assertEquals([r.calls, r.failures, r.serverClosedRounds], [10_000, 0, 50]);
    assert(r.connectionsOpened >= 100, `only ${r.connectionsOpened} connections`);
    const stats = (await control.stats()).talos;
    assert(stats.totalCalls >= 10_000);
    // 100 client connections, plus reconnections forced by the server's GOAWAYs.
    assert(stats.connections > 100, `server saw ${stats.connections} connections`);
    console.log(`churn: ${stats.connections} connections, ${Math.round(r.ms)} ms`);
    assertEquals(exitedEarly, false);
  } finally {
    await twin.stop();
  }
});

Deno.test("calls beyond maxCallsPerChannel move to a new connection without failing queued calls", async () => {
  const { twin, control, client } = await startTalosTwin();
  try {
    const talos = await client({ maxCallsPerChannel: 100 });
    // 250 calls issued at once, before any connection is up: the retired connections must stay
    // open until their queued calls have run.
    const tags = await Promise.all(
      Array.from({ length: 250 }, () => talos.version("cp-1", { timeoutMs: 10_000 })),
    );
    assertEquals(new Set(tags.map((t) => t.tag)), new Set(["v1.13.9"]));
    assertEquals(talos.connectionsOpened, 3);
    talos.close();
    const stats = (await control.stats()).talos;
    assertEquals(stats.connections, 3);
  } finally {
    await twin.stop();
  }
});

Deno.test("a read refused UNAVAILABLE is sent up to three times, or as often as the caller's attempts say", async () => {
  const { twin, control, client } = await startTalosTwin();
  try {
    const talos = await client();
    const versionCalls = async () =>
      (await control.stats()).talos.byNode["cp-1"]?.["MachineService/Version"] ?? 0;
    const refuse = (count: number) =>
      control.arm({ kind: "unavailable", point: "talos.Version", target: "cp-1", count });
    // Two refusals: the client's own retries reach the answer on the third call.
    await refuse(2);
    assertEquals((await talos.version("cp-1", { timeoutMs: 10_000 })).tag, "v1.13.9");
    assertEquals(await versionCalls(), 3);
    // One attempt asked (a caller that polls): the refusal is the answer, after one call.
    await refuse(2);
    const once = await talos.version("cp-1", { timeoutMs: 10_000, attempts: 1 }).then(
      () => "answered",
      (e: unknown) => e instanceof CairnError ? e.reason : String(e),
    );
    assertEquals(once, "TalosUnavailable");
    assertEquals(await versionCalls(), 4);
    talos.close();
  } finally {
    await twin.stop();
  }
});
