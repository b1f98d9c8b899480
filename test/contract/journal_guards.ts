/**
 * Contract tests for the journal's classification and fencing guards, each written so that it
 * fails when its one guard is removed (tools/mutants/journal.json names the mutants they kill):
 * readability of completion reads, `rejected` only on pre-mutation rejections, owner and
 * generation compared inside the attempt UPDATE independently of the epoch.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { REFUSAL_CAUSES, type ResponseClass } from "../../src/domain/operation.ts";
import type { Journal, OwnerToken, Refused } from "../../src/ports/journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  CONTROLLER,
  observe,
  T0,
} from "../_helpers/journal_world.ts";

/** Registers one test of the suite (the contract's `test`). */
export type GuardTest = (title: string, fn: (j: Journal) => Promise<void>) => void;

/**
 * Asserts a CairnError with `reason` (and a message matching `msg`, when given); `act` may throw
 * before it returns a promise (a role refused before any transaction).
 */
export async function refusedWith(
  act: Promise<unknown> | (() => Promise<unknown>),
  reason: string,
  msg?: RegExp,
): Promise<void> {
  try {
    await (typeof act === "function" ? act() : act);
  } catch (e) {
    const r = e as { reason?: string; message?: string };
    assertEquals(r.reason, reason, r.message);
    if (msg) assert(msg.test(r.message ?? ""), r.message);
    return;
  }
  assert(false, `expected ${reason}${msg ? ` ${msg}` : ""}`);
}

async function stateOf(j: Journal, id: string) {
  return (await j.getOperation(id))!.state;
}

/** A committed operation on worker-1 with one attempt answered `cls`. */
async function answered(j: Journal, cls: ResponseClass, at = T0 + 3000) {
  const plan = (await approvedPlan(j)).digest;
  const c = await committed(j, { plan });
  const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, at));
  assert(a.ok);
  await j.recordResponse({
    attemptId: a.attempt.id,
    token: c.token,
    responseClass: cls,
    detail: cls,
    nowMs: at + 1,
  });
  return { ...c, plan, attempt: a.attempt.id, t: at + 2 };
}

function move(
  j: Journal,
  id: string,
  token: OwnerToken,
  to: "verifying" | "unresolved",
  t: number,
) {
  return j.transition({ operationId: id, token, to, reason: "test", nowMs: t });
}

function refusedBy(r: { ok: boolean }, cause: keyof typeof REFUSAL_CAUSES): void {
  assert(!r.ok, `expected refusal ${cause}`);
  const f = r as Refused;
  assertEquals([f.cause, f.comparison], [cause, REFUSAL_CAUSES[cause]], f.detail);
}

/** Registers the guard tests. */
export function guardTests(test: GuardTest): void {
  test("an unreadable completion read never justifies failed (nor completed); a read that differs does", async (j) => {
    const c = await answered(j, "accepted");
    await move(j, c.op.id, c.token, "verifying", c.t);
    const fail = (observationId: string, t: number) =>
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "failed",
        observationId,
        reason: "test",
        nowMs: t,
      });
    // The digest differs from the bound one only because a value could not be read.
    const unread = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.13.9",
      postcondition: "unreadable",
      at: c.t + 1,
    });
    await refusedWith(fail(unread.id, c.t + 2), "TransitionIllegal", /unreadable; failed needs/);
    assertEquals(await stateOf(j, c.op.id), "verifying");
    // An unreadable read at the bound digest does not complete either.
    const unreadAtPost = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.2",
      postcondition: "unreadable",
      at: c.t + 3,
    });
    await refusedWith(
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "completed",
        observationId: unreadAtPost.id,
        reason: "test",
        nowMs: c.t + 4,
      }),
      "TransitionIllegal",
      /completed needs established/,
    );
    // A completion read that states nothing about its postconditions decides nothing.
    const unstated = await j.recordObservation({
      machine: "worker-1",
      purpose: "completion",
      operationId: c.op.id,
      digest: "v1.13.9",
      objectUid: "uid-worker-1",
      resourceVersion: "100",
      observedGeneration: 1,
      observedAtMs: c.t + 5,
      summary: "read",
      actor: CONTROLLER,
    });
    assertEquals(unstated.postcondition, undefined);
    await refusedWith(fail(unstated.id, c.t + 6), "TransitionIllegal", /unstated/);
    // Past the deadline the operation is unresolved; an unreadable read still cannot fail it.
    await move(j, c.op.id, c.token, "unresolved", c.t + 7);
    const unread2 = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.13.9",
      postcondition: "unreadable",
      at: c.t + 8,
    });
    await refusedWith(fail(unread2.id, c.t + 9), "TransitionIllegal", /unreadable/);
    assertEquals(await stateOf(j, c.op.id), "unresolved");
    // A read whose bound value was read and differs is the contradiction `failed` needs.
    const contra = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.13.9",
      postcondition: "contradicted",
      at: c.t + 10,
    });
    assertEquals(contra.postcondition, "contradicted");
    await fail(contra.id, c.t + 11);
    assertEquals(await stateOf(j, c.op.id), "failed");
    const ev = (await j.events()).find((e) =>
      e.kind === "observation" && e.body.includes(contra.id)
    );
    assert(ev?.body.includes('"postcondition":"contradicted"'), "the reading is on the timeline");
  });

  test("a contradicted reading must also differ from the bound digest, an established one equal it", async (j) => {
    const c = await answered(j, "accepted");
    await move(j, c.op.id, c.token, "verifying", c.t);
    const bad = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.2",
      postcondition: "contradicted",
      at: c.t + 1,
    });
    await refusedWith(
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "failed",
        observationId: bad.id,
        reason: "test",
        nowMs: c.t + 2,
      }),
      "TransitionIllegal",
      /does not support failed/,
    );
    assertEquals(await stateOf(j, c.op.id), "verifying");
  });

  test("rejected only when every attempt has a pre-mutation rejection and no other response", async (j) => {
    // A target error accounts for the attempt but proves nothing: never `rejected`.
    const te = await answered(j, "target-error");
    assertEquals(await stateOf(j, te.op.id), "unresolved");
    const reject = (id: string, token: OwnerToken, t: number) =>
      j.transition({ operationId: id, token, to: "rejected", reason: "test", nowMs: t });
    await refusedWith(reject(te.op.id, te.token, te.t), "TransitionIllegal", /rejected needs/);
    assertEquals(await stateOf(j, te.op.id), "unresolved");
  });

  test("rejected is refused once any attempt of the operation got another response", async (j) => {
    // An accepted pull, then a pre-mutation rejection of the install: the pull may have acted.
    const c = await answered(j, "accepted");
    const b = await j.beginAttempt({
      ...attemptInput(c.op.id, c.token, c.evidence, c.t),
      phase: "reboot",
    });
    assert(b.ok);
    await j.recordResponse({
      attemptId: b.attempt.id,
      token: c.token,
      responseClass: "rejected-pre-mutation",
      detail: "InvalidArgument",
      nowMs: c.t + 1,
    });
    assertEquals(await stateOf(j, c.op.id), "unresolved");
    await refusedWith(
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "rejected",
        reason: "test",
        nowMs: c.t + 2,
      }),
      "TransitionIllegal",
      /rejected needs/,
    );
    assertEquals(await stateOf(j, c.op.id), "unresolved");
  });

  test("a lone pre-mutation rejection of the only attempt is rejected and releases the scope", async (j) => {
    const c = await answered(j, "rejected-pre-mutation");
    assertEquals(await stateOf(j, c.op.id), "rejected");
    const next = await committed(j, { plan: c.plan, machine: "worker-2", at: c.t });
    assertEquals(next.op.state, "committed");
  });

  test("the attempt UPDATE compares the owner itself: another owner at the current generation and epoch is refused", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const intruder = { ...c.token, owner: "cairn-x" };
    refusedBy(
      await j.beginAttempt(attemptInput(c.op.id, intruder, c.evidence, T0 + 3000)),
      "fence-mismatch",
    );
    const op = (await j.getOperation(c.op.id))!;
    assertEquals([op.state, op.attemptsUsed, op.owner], ["committed", 0, "cairn-a"]);
    assertEquals((await j.showOperation(c.op.id))!.attempts, []);
  });

  test("the attempt UPDATE compares the generation itself: a stale generation in the current epoch is refused", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    // The same controller identity takes the operation over (a restart): generation 2.
    const tk = await j.takeOver({
      operationId: c.op.id,
      newOwner: c.token.owner,
      seenGen: 1,
      epoch: c.token.epoch,
      actor: CONTROLLER,
      nowMs: T0 + 2500,
    });
    assert(tk.ok);
    const current = { ...c.token, gen: 2 };
    // The new generation classifies the no-attempt operation safe to retry, so its state admits
    // an attempt: only the generation separates the stale token from the current one.
    const rec = await observe(j, { purpose: "recovery", at: T0 + 2600 });
    await j.classifySafeToRetry(c.op.id, current, rec.id, T0 + 2700);
    const ev = await observe(j, { plan, at: T0 + 2800 });
    refusedBy(
      await j.beginAttempt(attemptInput(c.op.id, c.token, ev.id, T0 + 2900)),
      "fence-mismatch",
    );
    const op = (await j.getOperation(c.op.id))!;
    assertEquals([op.state, op.attemptsUsed, op.ownerGen], ["unresolved", 0, 2]);
    // The current generation's attempt is admitted.
    const ok = await j.beginAttempt(attemptInput(c.op.id, current, ev.id, T0 + 2901));
    assert(ok.ok, "the current generation's retry should be admitted");
  });
}

/** Registers the accounting, ordering, settle-floor, takeover and cancellation guard tests. */
export function accountingGuardTests(test: GuardTest): void {
  test("a completion read ordered before the last accounting never completes, even when it matches", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assert(a.ok);
    // The read starts (its basis is allocated) while the response is still outstanding…
    const basis = await j.startObservation("worker-1", CONTROLLER, T0 + 3001);
    await j.recordResponse({
      attemptId: a.attempt.id,
      token: c.token,
      responseClass: "accepted",
      detail: "",
      nowMs: T0 + 3002,
    });
    await move(j, c.op.id, c.token, "verifying", T0 + 3003);
    // …and is recorded after it: it still precedes the accounting, so it completes nothing.
    const early = await j.recordObservation({
      machine: "worker-1",
      purpose: "completion",
      operationId: c.op.id,
      basis,
      digest: "v1.14.2",
      objectUid: "uid-worker-1",
      resourceVersion: "100",
      observedGeneration: 1,
      observedAtMs: T0 + 3004,
      summary: "read",
      postcondition: "established",
      actor: CONTROLLER,
    });
    const complete = (observationId: string, t: number) =>
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "completed",
        observationId,
        reason: "test",
        nowMs: t,
      });
    await refusedWith(
      complete(early.id, T0 + 3005),
      "TransitionIllegal",
      /not ordered after the last accounting/,
    );
    assertEquals(await stateOf(j, c.op.id), "verifying");
    const late = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.2",
      at: T0 + 3006,
    });
    await complete(late.id, T0 + 3007);
    assertEquals(await stateOf(j, c.op.id), "completed");
  });

  test("a completion read contradicted by a higher-basis read of the machine decides nothing", async (j) => {
    const c = await answered(j, "accepted");
    await move(j, c.op.id, c.token, "verifying", c.t);
    const done = await observe(j, {
      purpose: "completion",
      op: c.op.id,
      digest: "v1.14.2",
      at: c.t + 1,
    });
    // A later read of the same machine shows something else (the node reverted, or another
    // operator acted): the earlier match no longer establishes anything.
    await observe(j, { purpose: "recovery", digest: "v1.13.9", at: c.t + 2 });
    await refusedWith(
      j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "completed",
        observationId: done.id,
        reason: "test",
        nowMs: c.t + 3,
      }),
      "TransitionIllegal",
      /higher-basis observation .* differs/,
    );
    assertEquals(await stateOf(j, c.op.id), "verifying");
  });

  test("no terminal state while an attempt is unaccounted: scope and slot stay held", async (j) => {
    const c = await answered(j, "lost");
    assertEquals(await stateOf(j, c.op.id), "unresolved");
    for (const [to, digest] of [["completed", "v1.14.2"], ["failed", "v1.13.9"]] as const) {
      const o = await observe(j, { purpose: "completion", op: c.op.id, digest, at: c.t + 1 });
      await refusedWith(
        j.transition({
          operationId: c.op.id,
          token: c.token,
          to,
          observationId: o.id,
          reason: "test",
          nowMs: c.t + 2,
        }),
        "TransitionIllegal",
        /an attempt is unaccounted, the scope stays held/,
      );
    }
    assertEquals(await stateOf(j, c.op.id), "unresolved");
    const ev = await observe(j, { machine: "worker-2", plan: c.plan, at: c.t + 3 });
    const { epoch } = await j.installation();
    const next = await j.commit({
      planDigest: c.plan,
      step: "worker-2/0",
      evidenceId: ev.id,
      owner: "cairn-a",
      epoch,
      nowMs: c.t + 3,
    });
    assert(!next.ok && next.cause === "slot-held", "the rollout slot stays held");
  });

  test("no-attempt cancellation is refused once an attempt was recorded, even an accounted one", async (j) => {
    const c = await answered(j, "target-error");
    assertEquals(await stateOf(j, c.op.id), "unresolved");
    await j.endPlan(c.plan, "revoked", { identity: "bob", role: "approver" }, c.t);
    await refusedWith(
      j.cancelNoAttempt(c.op.id, "plan-revoked", CONTROLLER, c.t + 1),
      "CancellationRefused",
      /an attempt was recorded/,
    );
    assertEquals(await stateOf(j, c.op.id), "unresolved");
  });

  test("a takeover moves only a live operation: a terminal one keeps its owner and state", async (j) => {
    const c = await answered(j, "rejected-pre-mutation");
    assertEquals(await stateOf(j, c.op.id), "rejected");
    const r = await j.takeOver({
      operationId: c.op.id,
      newOwner: "cairn-b",
      seenGen: 1,
      epoch: c.token.epoch,
      actor: CONTROLLER,
      nowMs: c.t,
    });
    assertEquals(r.ok, false);
    const op = (await j.getOperation(c.op.id))!;
    assertEquals([op.state, op.owner, op.ownerGen], ["rejected", "cairn-a", 1]);
    assertEquals((await j.events()).filter((e) => e.kind === "ownership"), []);
  });

  test("the settle floor runs from the first successful read after the transport deadline when that is latest", async (j) => {
    const c = await answered(j, "transport-failure");
    const att = (await j.showOperation(c.op.id))!.attempts[0]!;
    const deadline = att.transportDeadlineMs;
    // The executor stopped before the deadline; the machine was first read 20 s after it.
    const stopped = deadline - 10_000;
    const firstRead = deadline + 20_000;
    await observe(j, { purpose: "recovery", at: firstRead });
    const floorEnd = firstRead + 30_000;
    const later = await observe(j, { purpose: "recovery", at: floorEnd });
    const decide = (nowMs: number) =>
      j.recordRecoveryDecision({
        attemptId: att.id,
        actor: { identity: "carol", role: "recovery-admin" },
        observationId: later.id,
        executorStoppedAtMs: stopped,
        settleFloorMs: 30_000,
        evidence: "talosctl read",
        nowMs,
      });
    // 30 s after the deadline is not enough: the floor starts at the later first read.
    await refusedWith(decide(deadline + 45_000), "RecoveryDecisionRefused", /settle floor ends/);
    await refusedWith(decide(floorEnd - 1), "RecoveryDecisionRefused", /settle floor ends/);
    await decide(floorEnd);
    assertEquals((await j.showOperation(c.op.id))!.attempts[0]!.accountedBy, "recovery");
  });

  test("the settle floor runs from the executor's stop when that is latest", async (j) => {
    const c = await answered(j, "transport-failure");
    const att = (await j.showOperation(c.op.id))!.attempts[0]!;
    const stopped = att.transportDeadlineMs + 50_000;
    const floorEnd = stopped + 30_000;
    // The first read after the deadline came before the stop: the stop is the latest event.
    await observe(j, { purpose: "recovery", at: att.transportDeadlineMs + 5_000 });
    const obs = await observe(j, { purpose: "recovery", at: floorEnd });
    const decide = (nowMs: number) =>
      j.recordRecoveryDecision({
        attemptId: att.id,
        actor: { identity: "carol", role: "recovery-admin" },
        observationId: obs.id,
        executorStoppedAtMs: stopped,
        settleFloorMs: 30_000,
        evidence: "talosctl read",
        nowMs,
      });
    await refusedWith(decide(floorEnd - 1), "RecoveryDecisionRefused", /settle floor ends/);
    await decide(floorEnd);
  });
}
