/**
 * A ConfigApply rehearsal on the twin process over real gRPC and TLS, through the harness
 * `cairn rehearse` uses (issue 14 must-show): with the `config-activation-deferred` fault, the
 * node stores and activates the document but its time service keeps the old servers; the
 * execution report says the setting is stored, not yet active, the node failed, and the verdict
 * follows the rows (the Talos-image rows not applicable, row 21 not passed).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { startConfigRehearsal } from "../../src/app/config_rehearsal.ts";
import { TEST_PKI_CACHE } from "../../src/app/twin_process.ts";
import { MemoryLogger } from "../_helpers/memory_logger.ts";
import { editPlanText } from "../_helpers/scenario_world.ts";
import { ROOT } from "../_helpers/twin_world.ts";

Deno.test("ConfigApply rehearsal: a setting that needs a reboot is reported stored, not yet active", async () => {
  const planPath = join(ROOT, "plans/config-apply-ntp.yaml");
  const text = editPlanText(await Deno.readTextFile(planPath), ["worker-1", "worker-2"]);
  const r = await startConfigRehearsal({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    planPath,
    planBytes: new TextEncoder().encode(text),
    faults: ["config-activation-deferred"],
    journalUrl: ":memory:",
    log: new MemoryLogger(),
    owner: "ctl_test",
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const out = await r.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "failed", "ConfigNotActive"],
    ]);
    const node = await r.control.node("worker-1");
    // Stored and even active as a document: only the running service shows it is not in effect.
    assertEquals(node.stagedConfig, null);
    assertEquals(node.runningTimeServers, ["time.cloudflare.com"]);
    const md = await r.report(out);
    assert(md.includes("**Verdict: FAILED"), md.slice(0, 400));
    assert(md.includes("stored, not yet active: machine.time.servers"));
    assert(!md.includes("pool.ntp.org"), "configuration values never reach the report");
    assert(/\| 21 \|[^\n]*\*\*not evaluated\*\*/.test(md), "row 21 is not passed");
    assert(/\| 10 \|[^\n]*not applicable/.test(md));
    assertEquals((await r.control.stats()).talos.mutatingByTarget["10.5.0.7"], undefined);
  } finally {
    await r.stop();
  }
});
