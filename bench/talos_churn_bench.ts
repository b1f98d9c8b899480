// deno-lint-ignore-file no-console
/**
 * Talos connection churn: 10,000 calls over 100 client connections (half closed by the server
 * with GOAWAY while calls are in flight, half by the client), cairn's Deno grpc-js client against
 * the twin under Node. Baseline in the same run: the same 10,000 calls on one kept connection.
 */
import { runChurn, startTalosTwin } from "../test/_helpers/talos_churn.ts";

const { twin, control, client } = await startTalosTwin();
try {
  // Baseline: one connection, same call mix, same concurrency shape.
  const talos = await client({ maxCallsPerChannel: 0 });
  const nodes = ["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"];
  const o = { timeoutMs: 10_000 };
  const t0 = performance.now();
  for (let round = 0; round < 100; round++) {
    for (let i = 0; i < 50; i++) await talos.version(nodes[i % 5]!, o);
    await Promise.all(Array.from({ length: 50 }, (_, i) => talos.serviceList(nodes[i % 5]!, o)));
  }
  const baseMs = performance.now() - t0;
  talos.close();
  await control.resetStats();
  const r = await runChurn(twin.talosconfigPath, control, 100, 100);
  const stats = (await control.stats()).talos;
  const alive = await control.now().then(() => true, () => false);
  console.log(`baseline (1 connection): 10000 calls in ${baseMs.toFixed(0)} ms`);
  console.log(
    `churn: ${r.calls} calls, ${r.failures} failed, ${r.rounds} rounds ` +
      `(${r.serverClosedRounds} closed by server GOAWAY), server saw ${stats.connections} ` +
      `connections, ${r.ms.toFixed(0)} ms, twin alive: ${alive}`,
  );
  console.log(`ratio churn/baseline: ${(r.ms / baseMs).toFixed(2)}x`);
  if (r.failures > 0 || !alive) Deno.exit(1);
} finally {
  await twin.stop();
}
