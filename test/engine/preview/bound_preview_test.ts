/**
 * The preview judges a plan on what it binds and on the cluster's own statement of who it is: the
 * health round uses the bound policy (a changed or missing one is said, never skipped silently),
 * and a plan written for another cluster is refused. Against the in-process twin.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { TalosUpgradePlan } from "../../../src/domain/plan/schema.ts";
import { livePreview } from "../../../src/engine/preview/live_preview.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN = join(ROOT, "plans/talos-v1.14.2.yaml");

async function plan(edit: (t: string) => string = (t) => t): Promise<TalosUpgradePlan> {
  const text = edit(onlyNodes("worker-1")(await Deno.readTextFile(PLAN)));
  const p = (await parsePlan(new TextEncoder().encode(text), { file: PLAN })).plan;
  if (p.kind !== "TalosUpgrade") throw new Error("not a TalosUpgrade");
  return p;
}

/** The repository's files, with the health policy edited after the plan bound it. */
function editedPolicy(): BoundFileSource {
  const real = workingTreeBoundFiles(PLAN);
  return {
    describe: () => "working tree with an edited policy",
    read: async (path) => {
      const r = await real.read(path);
      if (path !== "policies/home-ops.yaml" || r.status !== "read") return r;
      return {
        status: "read",
        bytes: new Uint8Array([...r.bytes, ...new TextEncoder().encode("# x\n")]),
      };
    },
  };
}

Deno.test("the preview's health round runs the bound policy", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const live = await livePreview(
      await plan(),
      { cluster: twin, clock: twin.timeoutClock },
      workingTreeBoundFiles(PLAN),
    );
    assertEquals(live.healthRounds.length, 1);
    assert(
      !live.reasons.some((r) => r.reason.startsWith("HealthPolicy")),
      JSON.stringify(live.reasons),
    );
  } finally {
    twin.stop();
  }
});

Deno.test("a policy changed after binding refuses the preview and runs no round under it", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const live = await livePreview(
      await plan(),
      { cluster: twin, clock: twin.timeoutClock },
      editedPolicy(),
    );
    assertEquals(live.healthRounds, [], "no round under a policy that is not the bound one");
    assert(live.refused);
    const r = live.reasons.find((x) => x.reason === "HealthPolicyDigestMismatch");
    assert(r && r.message.includes("no health round"), JSON.stringify(live.reasons));
  } finally {
    twin.stop();
  }
});

Deno.test("without the plan's repository the preview says it ran no round and holds", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const live = await livePreview(await plan(), { cluster: twin, clock: twin.timeoutClock });
    assertEquals(live.healthRounds, []);
    assert(live.held && !live.refused, JSON.stringify(live.reasons));
    assert(live.reasons.some((r) => r.reason === "HealthPolicyMissing"));
  } finally {
    twin.stop();
  }
});

Deno.test("a plan written for another cluster is refused by the preview (ClusterIdentityMismatch)", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const p = await plan((t) => t.replace("cluster: home-ops", "cluster: prod-eu"));
    const live = await livePreview(
      p,
      { cluster: twin, clock: twin.timeoutClock },
      workingTreeBoundFiles(PLAN),
    );
    assert(live.refused);
    const r = live.reasons.find((x) => x.reason === "ClusterIdentityMismatch");
    assert(r && r.message.includes("home-ops") && r.message.includes("prod-eu"));
    assertEquals(live.writes, { count: 0, refused: [] });
  } finally {
    twin.stop();
  }
});
