import { deepStrictEqual as assertEquals, rejects } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { approvedPlan, APPROVER, counterIds, T0 } from "../../_helpers/journal_world.ts";

Deno.test("recordEvidenceCheck() chains a plan's evidence verdicts onto the timeline", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  try {
    const plan = await approvedPlan(j);
    const seq = await j.recordEvidenceCheck({
      planDigest: plan.digest,
      manifestPath: "evidence/upgrade-order.yaml",
      manifestSha256: "e".repeat(64),
      verdict: "fail",
      detail: {
        sources: [{ id: "talos-upgrade", verdict: "fail", reason: "EvidenceHashMismatch" }],
      },
      actor: APPROVER,
      nowMs: T0 + 5000,
    });
    const ev = (await j.events()).find((e) => e.seq === seq)!;
    assertEquals(ev.kind, "evidence-check");
    const body = JSON.parse(ev.body);
    assertEquals([body.plan, body.verdict, body.detail.sources[0].reason], [
      plan.digest,
      "fail",
      "EvidenceHashMismatch",
    ]);
    assertEquals((await j.verifyChain()).ok, true);
  } finally {
    await j.close();
  }
});

Deno.test("recordEvidenceCheck() refuses a plan the journal does not know", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  try {
    await rejects(
      j.recordEvidenceCheck({
        planDigest: "f".repeat(64),
        manifestPath: "evidence/x.yaml",
        manifestSha256: "e".repeat(64),
        verdict: "pass",
        detail: {},
        actor: APPROVER,
        nowMs: T0,
      }),
      (e: unknown) => e instanceof CairnError && e.reason === "OperationNotFound",
    );
  } finally {
    await j.close();
  }
});
