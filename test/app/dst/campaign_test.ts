/** The first half of CI's fixed simulation budget (`_budget.ts`), and replay by seed. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { runSeed } from "../../../src/app/dst/run_seed.ts";
import { BUDGET, holdsOn } from "./_budget.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));

Deno.test("dst: seeds 1–250 of the CI budget hold every invariant", async () => {
  await holdsOn(1, BUDGET / 2);
});

Deno.test("dst: a seed replays the same run", async () => {
  const a = await runSeed({ seed: 4242, catalogue, profile: "ci" });
  const b = await runSeed({ seed: 4242, catalogue, profile: "ci" });
  assertEquals(a, b);
});
