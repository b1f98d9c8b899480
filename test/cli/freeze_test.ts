/** `cairn freeze` / `cairn unfreeze` record a cluster freeze with its actor in a journal file. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { counterIds, T0 } from "../_helpers/journal_world.ts";
import { runCli } from "../_helpers/cli_run.ts";

Deno.test("cairn freeze records actor and reason; unfreeze lifts it; a freeze without a reason is a usage error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${join(dir, "journal.db")}`;
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    await j.close();
    const noReason = await runCli([
      "freeze",
      "home-ops",
      "--actor",
      "alice@example.com",
      "-j",
      url,
    ]);
    assertEquals(noReason.code, 2);
    assert(noReason.stderr.includes("--reason TEXT is required"), noReason.stderr);
    const frozen = await runCli([
      "freeze",
      "home-ops",
      "--reason",
      "storage migration",
      "--actor",
      "alice@example.com",
      "-j",
      url,
    ]);
    assertEquals([frozen.code, frozen.stdout], [0, "cluster home-ops frozen: storage migration\n"]);
    const reopened = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      const f = await reopened.clusterFreeze("home-ops");
      assertEquals([f?.frozen, f?.reason, f?.actor], [
        true,
        "storage migration",
        "alice@example.com (approver)",
      ]);
      assertEquals(await reopened.clusterFreeze("other"), undefined);
    } finally {
      await reopened.close();
    }
    const lifted = await runCli(["unfreeze", "home-ops", "--actor", "bob@example.com", "-j", url]);
    assertEquals([lifted.code, lifted.stdout], [0, "cluster home-ops unfrozen\n"]);
    const after = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      assertEquals((await after.clusterFreeze("home-ops"))?.frozen, false);
      assert((await after.verifyChain()).ok);
    } finally {
      await after.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
