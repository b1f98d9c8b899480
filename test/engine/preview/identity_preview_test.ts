/**
 * The preview reads each plan node's machine identity the way the executor binds it at
 * commitment: the Node's systemUUID against Talos SystemInformation at the plan's address. Another
 * machine at an address refuses the plan (row NodeIdentityBound fails); an identity that cannot be
 * read holds it. Read-only, against the in-process twin.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { TalosUpgradePlan } from "../../../src/domain/plan/schema.ts";
import { livePreview } from "../../../src/engine/preview/live_preview.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN = join(ROOT, "plans/talos-v1.14.2.yaml");

async function plan(): Promise<TalosUpgradePlan> {
  const text = onlyNodes("worker-1", "worker-2")(await Deno.readTextFile(PLAN));
  const p = (await parsePlan(new TextEncoder().encode(text), { file: PLAN })).plan;
  if (p.kind !== "TalosUpgrade") throw new Error("not a TalosUpgrade");
  return p;
}

async function preview(faults: Fault[] = []) {
  const twin = startInprocTwin({ description: await homeOps(), faults });
  try {
    const live = await livePreview(
      await plan(),
      { cluster: twin, clock: twin.timeoutClock },
      workingTreeBoundFiles(PLAN),
    );
    const row = live.safeguards.find((r) => r.id === "NodeIdentityBound")!;
    return { live, row, mutating: twin.talos.stats.totalMutating + twin.kube.stats.mutating };
  } finally {
    twin.stop();
  }
}

Deno.test("preview: every plan node is one machine at its declared address", async () => {
  const { live, row, mutating } = await preview();
  assertEquals(row.verdict, "pass");
  assert(row.evidence.includes("node=worker-1 address=10.5.0.6"), row.evidence);
  assert(!live.reasons.some((r) => r.reason.startsWith("MachineIdentity")));
  assertEquals(mutating, 0);
});

Deno.test("preview: another machine at a declared address refuses the plan", async () => {
  const { live, row, mutating } = await preview([{
    kind: "address-reused",
    point: "talos.route",
    target: "worker-2",
    params: { by: "worker-3" },
  }]);
  assertEquals(row.verdict, "fail");
  assertEquals(live.refused, true);
  assertEquals(
    live.reasons.filter((r) => r.reason === "MachineIdentityMismatch").map((r) => r.where),
    ["worker-2"],
  );
  assertEquals(mutating, 0);
});

Deno.test("preview: an identity that cannot be read holds the plan, it does not refuse it", async () => {
  const { live, row } = await preview([{
    kind: "unavailable",
    point: "talos.cosi.Get",
    target: "worker-1",
    count: 100,
    params: { type: "SystemInformations.hardware.talos.dev" },
  }]);
  assertEquals(row.verdict, "unreadable");
  assertEquals([live.held, live.refused], [true, false]);
});
