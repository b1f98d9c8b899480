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

/** Asserts a CairnError with `reason` whose message matches `msg`. */
async function refusedWith(p: Promise<unknown>, reason: string, msg: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    const r = e as { reason?: string; message?: string };
    assertEquals(r.reason, reason, r.message);
    assert(msg.test(r.message ?? ""), r.message);
    return;
  }
  assert(false, `expected ${reason}`);
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
