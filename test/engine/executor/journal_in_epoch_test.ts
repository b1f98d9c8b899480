/**
 * `journalInEpoch`: every journal act without an owner token, asked through the wrapper, carries
 * the epoch the controller started in — recorded while that epoch is current, refused
 * (`EpochSuperseded`, nothing written) once a restore or a recovery entry moved it. Callers pass
 * no epoch themselves (tools/mutants/epoch.json).
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { journalInEpoch } from "../../../src/engine/executor/journal_in_epoch.ts";
import {
  ADMIN,
  approvedPlan,
  counterIds,
  T0,
  tokenlessActs,
} from "../../_helpers/journal_world.ts";

async function world() {
  const raw = await openJournal({ url: ":memory:", ids: counterIds("ie"), nowMs: T0 });
  const plan = (await approvedPlan(raw)).digest;
  const started = (await raw.installation()).epoch;
  return { raw, plan, started };
}

Deno.test("journalInEpoch: each act without an owner token is recorded while the controller's epoch is current", async () => {
  const { raw, plan, started } = await world();
  try {
    const seq = async () => (await raw.events()).length;
    for (const [name, act] of tokenlessActs(journalInEpoch(raw, started), plan, T0 + 2000)) {
      const before = await seq();
      await act();
      assert((await seq()) > before || name === "startObservation", `${name} recorded nothing`);
    }
  } finally {
    await raw.close();
  }
});

Deno.test("journalInEpoch: after a journal restore each act without an owner token is refused EpochSuperseded and writes nothing", async () => {
  const { raw, plan, started } = await world();
  try {
    const fenced = journalInEpoch(raw, started);
    // A restore as the recovery admin records it: a new epoch, the controller's is superseded.
    const after = await raw.enterRecoveryMode(ADMIN, "journal restored from backup b-1", T0 + 1500);
    assert(after !== started);
    await raw.exitRecoveryMode(ADMIN, T0 + 1600);
    const exported = JSON.stringify(await raw.exportAll());
    for (const [name, act] of tokenlessActs(fenced, plan, T0 + 2000)) {
      await rejects(act(), (e: unknown) => {
        assert(e instanceof CairnError && e.reason === "EpochSuperseded", `${name}: ${e}`);
        assert(e.message.includes(started), e.message);
        return true;
      });
    }
    assertEquals(JSON.stringify(await raw.exportAll()), exported, "nothing was written");
    // The same acts asked of the journal itself (a recovery admin's, in the current epoch) pass.
    for (const [, act] of tokenlessActs(raw, plan, T0 + 2100)) await act();
  } finally {
    await raw.close();
  }
});

Deno.test("journalInEpoch: without an epoch (cairn recover) the journal is returned as it is", async () => {
  const { raw } = await world();
  try {
    assert(journalInEpoch(raw, undefined) === raw);
  } finally {
    await raw.close();
  }
});
