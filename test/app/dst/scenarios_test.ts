/**
 * One named regression scenario per public incident of this class (src/app/dst/scenarios.ts):
 * each replays its seed and fault schedule through the campaign runner (every invariant checked
 * after every step) and asserts the classification a correct executor reaches, and what it must
 * not have sent.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { runSeed } from "../../../src/app/dst/run_seed.ts";
import { SCENARIOS } from "../../../src/app/dst/scenarios.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
const base = { catalogue, profile: "ci" as const };

Deno.test("dst scenarios: at least fifteen, each naming its incidents", () => {
  assert(SCENARIOS.length >= 15, `${SCENARIOS.length} scenarios`);
  assertEquals(new Set(SCENARIOS.map((s) => s.name)).size, SCENARIOS.length);
  for (const s of SCENARIOS) assert(s.incidents.length > 0, s.name);
});

for (const s of SCENARIOS) {
  Deno.test(`dst scenario ${s.name}`, async () => {
    const run = {
      ...base,
      seed: s.seed,
      maxPlanNodes: s.planNodes ?? 1,
      kind: s.kind ?? "TalosUpgrade",
    };
    let cleanNodes: string[] = [];
    const clean = await runSeed({
      ...run,
      events: [],
      inspect: (_journal, twin) => {
        cleanNodes = [...twin.cluster.nodes.keys()];
        return Promise.resolve();
      },
    });
    // A ComponentUpgrade has no plan node: its scenarios aim at the cluster's nodes.
    const node = clean.planNodes[0] ?? "";
    const events = s.events({ node, cleanPoints: clean.pointNames, cleanNodes });
    const seen: { installs?: number; reboots?: number; cordoned?: boolean } = {};
    const r = await runSeed({
      ...run,
      events,
      ...s.options,
      inspect: (_journal, twin) => {
        const calls = twin.talos.stats.byNode[node] ?? {};
        seen.installs = calls["LifecycleService/Upgrade"] ?? 0;
        seen.reboots = calls["MachineService/Reboot"] ?? 0;
        const nodes = twin.store.findType("", "v1", "nodes")!;
        seen.cordoned =
          (twin.store.get(nodes, undefined, node)?.["spec"] as { unschedulable?: boolean })
            ?.unschedulable === true;
        return Promise.resolve();
      },
    });
    assertEquals(r.violation, undefined, r.violation?.detail);
    assertEquals(r.error, undefined);
    assertEquals(
      r.states[node] ?? "pending",
      s.expect.state,
      `${node}: ${JSON.stringify(r.states)} (${r.reason})`,
    );
    if (s.expect.end) assertEquals(r.end, s.expect.end);
    if (s.expect.reason) assertEquals(r.reason, s.expect.reason);
    if (s.expect.installs !== undefined) assertEquals(seen.installs, s.expect.installs, "installs");
    if (s.expect.reboots !== undefined) assertEquals(seen.reboots, s.expect.reboots, "reboots");
    if (s.expect.cordoned !== undefined) assertEquals(seen.cordoned, s.expect.cordoned, "cordoned");
    if (s.expect.next !== undefined) assertEquals(r.states[clean.planNodes[1]!], s.expect.next);
  });
}
