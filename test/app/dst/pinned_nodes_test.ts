/** `deno task dst --nodes N`: the drawn world resized, the crash sweep's 7-node world among them. */
import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import { pinnedNodes, sevenNodes } from "../../../src/app/dst/campaign.ts";
import { drawShape } from "../../../src/app/dst/world.ts";
import { Prng } from "../../../src/app/dst/prng.ts";

Deno.test("dst pinnedNodes resizes a drawn world and keeps its workloads", () => {
  const drawn = drawShape(new Prng(4), "full");
  const seven = sevenNodes(drawn);
  assertEquals(seven.nodes, 7);
  assertEquals(seven.controlPlanes, ["cp-1", "cp-2", "cp-3"]);
  assertEquals(seven.workers, ["worker-1", "worker-2", "worker-3", "worker-4"]);
  assertEquals(seven.pdbLayout, drawn.pdbLayout);
  const withDb = { ...drawn, databasePrimary: "worker-9" };
  assertEquals(pinnedNodes(7)(withDb).databasePrimary, "worker-1");
  // Fewer than three hosts: no database, as the draw has it; below five nodes, one control plane.
  const three = pinnedNodes(3)(withDb);
  assertEquals([three.controlPlanes, three.workers], [["cp-1"], ["worker-1", "worker-2"]]);
  assertEquals(three.databasePrimary, "worker-1");
  assertEquals(pinnedNodes(2)(withDb).databasePrimary, undefined);
  assertThrows(() => pinnedNodes(0), RangeError);
});
