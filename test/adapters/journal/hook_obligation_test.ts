/** The owed-post-hook journal contract on a libSQL `:memory:` journal (fast; mutants run it). */
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";
import { owedHookContract } from "../../contract/hook_obligation_contract.ts";

Deno.test("an owed post hook refuses the machine's next commitment until exactly one controller has sent it", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  try {
    await owedHookContract(j);
  } finally {
    await j.close();
  }
});
