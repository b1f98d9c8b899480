/** The owed-post-hook journal contract on a libSQL `:memory:` journal (fast; mutants run it). */
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";
import { owedHookContract, owedHookGateContract } from "../../contract/hook_obligation_contract.ts";

Deno.test("an owed post hook refuses the machine's next commitment until exactly one controller has sent it", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  try {
    await owedHookContract(j);
  } finally {
    await j.close();
  }
});

Deno.test("an owed post hook is not claimed on a frozen machine or a recovery scope not yet released", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  try {
    await owedHookGateContract(j);
  } finally {
    await j.close();
  }
});
