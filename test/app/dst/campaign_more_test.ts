/** The second half of CI's fixed simulation budget (`_budget.ts`). */
import { BUDGET, holdsOn } from "./_budget.ts";

Deno.test("dst: seeds 251–500 of the CI budget hold every invariant", async () => {
  await holdsOn(BUDGET / 2 + 1, BUDGET / 2);
});
