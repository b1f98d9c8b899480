import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { abortPlan } from "../../src/cli/abort.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  counterIds,
  T0,
} from "../_helpers/journal_world.ts";

async function journal() {
  return await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
}

Deno.test("abortPlan() revokes the plan and cancels an operation that never recorded an attempt", async () => {
  const j = await journal();
  try {
    const plan = await approvedPlan(j);
    const c = await committed(j, { plan: plan.digest });
    const r = await abortPlan(j, {
      plan: "talos-v1.14.2",
      actor: "alice@example.com",
      nowMs: T0 + 5000,
    });
    assertEquals(r.effects.map((e) => [e.node, e.before, e.after]), [[
      "worker-1",
      "committed",
      "cancelled",
    ]]);
    assertEquals((await j.getPlan(plan.digest))?.state, "revoked");
    assertEquals((await j.getOperation(c.op.id))?.state, "cancelled");
  } finally {
    await j.close();
  }
});

Deno.test("abortPlan() is not undo: an operation with an attempt keeps its state and accounting", async () => {
  const j = await journal();
  try {
    const plan = await approvedPlan(j);
    const c = await committed(j, { plan: plan.digest });
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assertEquals(a.ok, true);
    const r = await abortPlan(j, {
      plan: plan.digest,
      actor: "alice@example.com",
      nowMs: T0 + 5000,
    });
    assertEquals(r.effects.map((e) => [e.node, e.before, e.after]), [[
      "worker-1",
      "sending",
      "sending",
    ]]);
    // The revoked plan authorises no further attempt: the next one is refused by comparison 1.
    const next = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 6000));
    assertEquals(next.ok ? "sent" : next.cause, "plan-not-approved");
  } finally {
    await j.close();
  }
});
