/**
 * Contract tests for the guards of safe-to-retry classification and of the completion
 * transition (src/adapters/journal/accounting.ts; tools/mutants/accounting_rules.json names the
 * mutant each kills). A wrong safe-to-retry class admits a second install or reboot; a wrong
 * `completed` claims what no read established.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { ResponseClass } from "../../src/domain/operation.ts";
import type { Journal } from "../../src/ports/journal.ts";
import {
  ADMIN,
  approvedPlan,
  APPROVER,
  attemptInput,
  committed,
  CONTROLLER,
  observe,
  T0,
} from "../_helpers/journal_world.ts";
import { type GuardTest, refusedWith } from "./journal_guards.ts";

/**
 * An operation on worker-1 whose attempts were answered with `classes` in turn (each retry
 * classified safe first), ending `unresolved` unless the last class says otherwise.
 */
async function answered(
  j: Journal,
  classes: readonly ResponseClass[],
  opts: { maxAttempts?: number; beforeLastAnswer?: () => Promise<void> } = {},
) {
  const plan = (await approvedPlan(j, { maxAttempts: opts.maxAttempts ?? 3 })).digest;
  const c = await committed(j, { plan });
  let t = T0 + 3000;
  for (const [i, cls] of classes.entries()) {
    if (i > 0) {
      const rec = await observe(j, { purpose: "recovery", at: t++ });
      await j.classifySafeToRetry(c.op.id, c.token, rec.id, t++);
    }
    const ev = i === 0 ? c.evidence : (await observe(j, { plan, at: t++ })).id;
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, ev, t++));
    assert(a.ok, `attempt ${i + 1} refused`);
    if (i === classes.length - 1) await opts.beforeLastAnswer?.();
    await j.recordResponse({
      attemptId: a.attempt.id,
      token: c.token,
      responseClass: cls,
      detail: cls,
      nowMs: t++,
    });
  }
  return { ...c, plan, t };
}

/** A recovery read of worker-1 at the pre digest (nothing applied), taken now. */
const preRead = (j: Journal, at: number) => observe(j, { purpose: "recovery", at });

/** Registers the tests. */
export function classificationGuardTests(test: GuardTest): void {
  test("safe-to-retry: the control case classifies an unresolved operation whose attempts the target answered", async (j) => {
    const c = await answered(j, ["target-error"]);
    assertEquals((await j.getOperation(c.op.id))!.state, "unresolved");
    const rec = await preRead(j, c.t);
    const op = await j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 1);
    assert(op.safeRetryRevision !== null);
  });

  test("safe-to-retry is refused while an attempt is unaccounted", async (j) => {
    const c = await answered(j, ["transport-failure"]);
    const rec = await preRead(j, c.t);
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 1),
      "TransitionIllegal",
      /unaccounted/,
    );
  });

  test("safe-to-retry is refused once an attempt was accepted", async (j) => {
    const c = await answered(j, ["accepted"]);
    await j.transition({
      operationId: c.op.id,
      token: c.token,
      to: "unresolved",
      reason: "verification lost",
      nowMs: c.t,
    });
    const rec = await preRead(j, c.t + 1);
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 2),
      "TransitionIllegal",
      /accepted/,
    );
  });

  test("safe-to-retry is refused after a definitive pre-mutation rejection of a retry", async (j) => {
    const c = await answered(j, ["target-error", "rejected-pre-mutation"]);
    assertEquals((await j.getOperation(c.op.id))!.state, "unresolved");
    const rec = await preRead(j, c.t);
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 1),
      "TransitionIllegal",
      /definitive rejection/,
    );
  });

  test("safe-to-retry is refused once the plan is revoked", async (j) => {
    const revoked = await answered(j, ["target-error"]);
    await j.endPlan(revoked.plan, "revoked", APPROVER, revoked.t);
    const rec = await preRead(j, revoked.t + 1);
    await refusedWith(
      j.classifySafeToRetry(revoked.op.id, revoked.token, rec.id, revoked.t + 2),
      "TransitionIllegal",
      /not safe to retry: plan is revoked/,
    );
  });

  test("safe-to-retry is refused with the plan's attempt budget spent", async (j) => {
    const c = await answered(j, ["target-error"], { maxAttempts: 1 });
    const rec = await preRead(j, c.t);
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 1),
      "TransitionIllegal",
      /no attempts left/,
    );
  });

  test("safe-to-retry is refused on a frozen machine", async (j) => {
    const c = await answered(j, ["target-error"]);
    await j.setFrozen("worker-1", true, ADMIN, c.t);
    const rec = await preRead(j, c.t + 1);
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, rec.id, c.t + 2),
      "TransitionIllegal",
      /frozen/,
    );
  });

  test("safe-to-retry rests only on a completion or recovery read at the pre digest, taken after the last accounting", async (j) => {
    let early = "";
    const c = await answered(j, ["target-error"], {
      beforeLastAnswer: async () => {
        early = (await observe(j, { purpose: "recovery", at: T0 + 3500 })).id;
      },
    });
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, early, c.t),
      "TransitionIllegal",
      /precedes the last accounting/,
    );
    const health = await observe(j, { purpose: "health", at: c.t + 1 });
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, health.id, c.t + 2),
      "TransitionIllegal",
      /not a completion or recovery read/,
    );
    // The machine reads back at the target version: something was applied.
    const moved = await observe(j, { purpose: "recovery", at: c.t + 3, digest: "v1.14.2" });
    await refusedWith(
      j.classifySafeToRetry(c.op.id, c.token, moved.id, c.t + 4),
      "TransitionIllegal",
      /not at the pre digest/,
    );
  });

  test("an attempt's response is recorded once: a second answer is refused and changes nothing", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assert(a.ok);
    const answer = (cls: ResponseClass, nowMs: number) =>
      j.recordResponse({
        attemptId: a.attempt.id,
        token: c.token,
        responseClass: cls,
        detail: cls,
        nowMs,
      });
    await answer("transport-failure", T0 + 3001);
    await refusedWith(answer("accepted", T0 + 3002), "TransitionIllegal", /already has a response/);
    const att = (await j.showOperation(c.op.id))!.attempts[0]!;
    assertEquals([att.responseClass, att.accountedBy], ["transport-failure", null]);
  });

  test("completed needs a completion read of this operation that established the post digest", async (j) => {
    const c = await answered(j, ["accepted"]);
    await j.transition({
      operationId: c.op.id,
      token: c.token,
      to: "verifying",
      reason: "accepted",
      nowMs: c.t,
    });
    const complete = (observationId: string, nowMs: number) =>
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "completed",
        reason: "test",
        nowMs,
        observationId,
      });
    // A read taken for another operation decides nothing here.
    const elsewhere = await observe(j, {
      purpose: "completion",
      op: "op_elsewhere",
      digest: "v1.14.2",
      at: c.t + 1,
    });
    await refusedWith(
      complete(elsewhere.id, c.t + 2),
      "TransitionIllegal",
      /not a completion read/,
    );
    // A reading stated as established at a digest that is not the post digest.
    const wrong = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.1",
      postcondition: "established",
      at: c.t + 3,
    });
    await refusedWith(complete(wrong.id, c.t + 4), "TransitionIllegal", /does not support/);
    const right = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.2",
      at: c.t + 5,
    });
    assertEquals((await complete(right.id, c.t + 6)).state, "completed");
    // A terminal operation leaves no more: ER has no transition out of completed.
    await refusedWith(
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "unresolved",
        reason: "test",
        nowMs: c.t + 7,
      }),
      "TransitionIllegal",
      /not an ER transition/,
    );
    assertEquals((await j.getOperation(c.op.id))!.state, "completed");
  });

  test("a recovery decision accounts an attempt once, and only on a recovery read", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assert(a.ok);
    await j.recordResponse({
      attemptId: a.attempt.id,
      token: c.token,
      responseClass: "transport-failure",
      detail: "timeout",
      nowMs: T0 + 3001,
    });
    const deadline = a.attempt.transportDeadlineMs;
    // The first read of the machine after the deadline: the settle floor can start.
    await observe(j, { purpose: "health", at: deadline + 500 });
    const tk = await j.takeOver({
      operationId: c.op.id,
      newOwner: "cairn-b",
      seenGen: 1,
      epoch: c.token.epoch,
      actor: CONTROLLER,
      nowMs: deadline + 1000,
    });
    assert(tk.ok);
    const after = deadline + 1000 + 60_000;
    const decide = (observationId: string, nowMs: number) =>
      j.recordRecoveryDecision({
        attemptId: a.attempt.id,
        actor: ADMIN,
        observationId,
        settleFloorMs: 30_000,
        evidence: "talosctl read",
        nowMs,
      });
    const health = await observe(j, { purpose: "health", at: after });
    await refusedWith(decide(health.id, after + 1), "RecoveryDecisionRefused", /not a recovery/);
    const rec = await observe(j, { purpose: "recovery", at: after + 2 });
    await decide(rec.id, after + 3);
    const att = (await j.showOperation(c.op.id))!.attempts[0]!;
    assertEquals(att.accountedBy, "recovery");
    const rec2 = await observe(j, { purpose: "recovery", at: after + 4 });
    await refusedWith(decide(rec2.id, after + 5), "RecoveryDecisionRefused", /already accounted/);
  });
}
