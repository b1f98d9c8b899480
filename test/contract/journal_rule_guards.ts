/**
 * Contract tests for the journal's fencing, role and obligation guards (commitment.ts, context.ts,
 * ownership.ts, recovery_attempt.ts, hook_obligations.ts, beside.ts and kysely_journal.ts; each
 * kills the mutants of tools/mutants/journal_rules.json it names): a refused caller touches only
 * its own operation, every owner act compares owner, generation and epoch on its own, each role
 * stays within its permission, and an owed post hook is claimed and discharged exactly once.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { REFUSAL_CAUSES } from "../../src/domain/operation.ts";
import type { Journal, OwnerToken, Refused } from "../../src/ports/journal.ts";
import {
  ADMIN,
  approvedPlan,
  APPROVER,
  attemptInput,
  committed,
  CONTROLLER,
  observe,
  planInput,
  T0,
} from "../_helpers/journal_world.ts";
import { type GuardTest, refusedWith } from "./journal_guards.ts";

function refusedBy(r: { ok: boolean }, cause: keyof typeof REFUSAL_CAUSES): void {
  assert(!r.ok, `expected refusal ${cause}`);
  const f = r as Refused;
  assertEquals([f.cause, f.comparison], [cause, REFUSAL_CAUSES[cause]], f.detail);
}

async function kinds(j: Journal, opId: string): Promise<string[]> {
  return (await j.events()).filter((e) => e.operationId === opId).map((e) => e.kind);
}

/**
 * An operation on worker-1 ended `rejected` in the first epoch (its owner keeps it: a recovery
 * entry takes over live operations only), then a recovery entry into a second epoch.
 */
async function endedBeforeRecovery(j: Journal) {
  const plan = (await approvedPlan(j)).digest;
  const c = await committed(j, { plan });
  const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
  assert(a.ok);
  await j.recordResponse({
    attemptId: a.attempt.id,
    token: c.token,
    responseClass: "rejected-pre-mutation",
    detail: "InvalidArgument",
    nowMs: T0 + 3001,
  });
  assertEquals((await j.getOperation(c.op.id))!.state, "rejected");
  const epoch = await j.enterRecoveryMode(ADMIN, "restored backup b-9", T0 + 4000);
  const op = (await j.getOperation(c.op.id))!;
  assertEquals([op.owner, op.ownerGen, op.ownerEpoch], ["cairn-a", 1, c.token.epoch]);
  return { ...c, plan, epoch, t: T0 + 4001 };
}

const digest = (c: string) => c.repeat(64);

/** One owed-hook declaration: its name and the request digests of its two stages. */
interface Hook {
  readonly hook: string;
  readonly pre: string;
  readonly post: string;
}

/**
 * An operation on worker-1 that recorded `hooks` as owed, then attempted (each answered
 * `accepted`) the request digests `sent` in order; `end` then has the machine refuse a
 * ConfigApply by validation, which ends the operation `rejected`.
 */
async function hooked(
  j: Journal,
  hooks: readonly Hook[],
  sent: readonly { phase: "pre-hook" | "post-hook"; digest: string }[],
  end: boolean,
) {
  // Every phase's request is an attempt of the plan's budget: leave room for all of them.
  const plan = (await approvedPlan(j, { maxAttempts: 10 })).digest;
  const c = await committed(j, { plan });
  let t = T0 + 2100;
  for (const h of hooks) {
    await j.recordHookOwed({
      operationId: c.op.id,
      token: c.token,
      hook: h.hook,
      namespace: "ops",
      job: { metadata: { name: `${h.hook}-post` } },
      timeoutSeconds: 60,
      preRequestDigest: h.pre,
      postRequestDigest: h.post,
      nowMs: t++,
    });
  }
  const attempt = async (
    phase: "pre-hook" | "post-hook" | "config-apply",
    requestDigest: string,
  ) => {
    const a = await j.beginAttempt({
      ...attemptInput(c.op.id, c.token, c.evidence, t++),
      phase,
      requestDigest,
    });
    assert(a.ok, JSON.stringify(a));
    return a.attempt.id;
  };
  for (const s of sent) {
    await j.recordResponse({
      attemptId: await attempt(s.phase, s.digest),
      token: c.token,
      responseClass: "accepted",
      detail: "created",
      nowMs: t++,
    });
  }
  if (end) {
    await j.recordResponse({
      attemptId: await attempt("config-apply", digest("c")),
      token: c.token,
      responseClass: "rejected-pre-mutation",
      detail: "InvalidArgument",
      nowMs: t++,
    });
    assertEquals((await j.getOperation(c.op.id))!.state, "rejected");
  }
  const { epoch } = await j.installation();
  const claim = (hook: string, at: number, e = epoch) =>
    j.claimOwedHook({ operationId: c.op.id, hook, claimant: "cairn-a", epoch: e, nowMs: at });
  const discharge = (hook: string, claimId: string, at: number) =>
    j.recordHookDischarge({
      operationId: c.op.id,
      hook,
      claimId,
      claimant: "cairn-a",
      responseClass: "accepted",
      outcome: "succeeded",
      jobRef: `ops/${hook}-post`,
      detail: "Complete",
      nowMs: at,
      epoch,
    });
  const states = async () =>
    (await j.hookObligations([c.op.id])).map((o) => `${o.hook}:${o.state}`).sort();
  return { ...c, plan, epoch, t, claim, discharge, states };
}

/** A commitment of another plan on worker-1 (the machine the hooks are owed on). */
async function commitElsewhere(j: Journal, at: number) {
  const other = await approvedPlan(j, { digest: digest("e"), name: "talos-other" });
  const ev = await observe(j, { plan: other.digest, at });
  const { epoch } = await j.installation();
  return await j.commit({
    planDigest: other.digest,
    step: "worker-1/0",
    evidenceId: ev.id,
    owner: "cairn-b",
    epoch,
    nowMs: at,
  });
}

/** Registers the tests. */
export function ruleGuardTests(test: GuardTest): void {
  test("an attempt refused on its authority under another owner's or generation's token leaves the owner's committed operation untouched", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const strangers: OwnerToken[] = [{ ...c.token, owner: "cairn-x" }, { ...c.token, gen: 2 }];
    for (const [i, token] of strangers.entries()) {
      // Evidence that is not in the journal: comparison 3 refuses before the fence is compared.
      const r = await j.beginAttempt(attemptInput(c.op.id, token, "obs_none", T0 + 3000 + i));
      refusedBy(r, "evidence-missing");
      assertEquals((await j.getOperation(c.op.id))!.state, "committed");
    }
    // Each refusal is recorded; no transition is, neither in the state nor on the timeline.
    assertEquals(await kinds(j, c.op.id), ["commitment", "refusal", "refusal"]);
    // The owner's own attempt refused on the same comparison does unsettle it (ER).
    refusedBy(
      await j.beginAttempt(attemptInput(c.op.id, c.token, "obs_none", T0 + 3010)),
      "evidence-missing",
    );
    assertEquals((await j.getOperation(c.op.id))!.state, "unresolved");
    assertEquals((await kinds(j, c.op.id)).slice(-2), ["refusal", "transition"]);
    assert((await j.verifyChain()).ok);
  });

  test("an owner act under another owner's token at the current generation and epoch is fenced and writes nothing", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assert(a.ok);
    const intruder = { ...c.token, owner: "cairn-x" };
    const head = (await j.events()).length;
    await refusedWith(
      j.recordResponse({
        attemptId: a.attempt.id,
        token: intruder,
        responseClass: "accepted",
        detail: "",
        nowMs: T0 + 3001,
      }),
      "OwnerFenced",
    );
    await refusedWith(
      j.recordPhase({
        operationId: c.op.id,
        token: intruder,
        phase: "cordon",
        kind: "fact",
        detail: { alreadyUnschedulable: true },
        nowMs: T0 + 3002,
      }),
      "OwnerFenced",
    );
    assertEquals((await j.events()).length, head, "a fenced act writes nothing");
    const att = (await j.showOperation(c.op.id))!.attempts[0]!;
    assertEquals([att.responseClass, att.accountedBy], [null, null]);
  });

  test("an operation ended in an earlier epoch is owned by no token: not its old epoch's, nor the current one's", async (j) => {
    const e = await endedBeforeRecovery(j);
    const phase = (token: OwnerToken) =>
      j.recordPhase({
        operationId: e.op.id,
        token,
        phase: "uncordon",
        kind: "intent",
        detail: {},
        nowMs: e.t,
      });
    const head = (await j.events()).length;
    await refusedWith(phase(e.token), "EpochSuperseded");
    await refusedWith(phase({ ...e.token, epoch: e.epoch }), "OwnerFenced");
    assertEquals((await j.events()).length, head, "a fenced act writes nothing");
    // A recovery attempt on it is refused the same way, and admits nothing.
    const begin = (token: OwnerToken) =>
      j.beginRecoveryAttempt({
        operationId: e.op.id,
        token,
        actor: ADMIN,
        decision: "uncordonOwnedCordon",
        phase: "uncordon",
        requestDigest: digest("u"),
        route: "kube:patch nodes/worker-1",
        evidence: {},
        nowMs: e.t,
      });
    refusedBy(await begin(e.token), "epoch-superseded");
    refusedBy(await begin({ ...e.token, epoch: e.epoch }), "fence-mismatch");
    assertEquals((await kinds(j, e.op.id)).filter((k) => k.startsWith("recovery-attempt")), [
      "recovery-attempt-refused",
      "recovery-attempt-refused",
    ]);
  });

  test("a recovery attempt is a recovery-admin's, under the token that owns the operation now; its response is recorded once, by that owner", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    await j.transition({
      operationId: c.op.id,
      token: c.token,
      to: "unresolved",
      reason: "halted",
      nowMs: T0 + 2500,
    });
    const take = async (seenGen: number, at: number) => {
      const r = await j.takeOver({
        operationId: c.op.id,
        newOwner: "recover:carol",
        seenGen,
        epoch: c.token.epoch,
        actor: ADMIN,
        nowMs: at,
      });
      assert(r.ok);
      return { owner: r.operation.owner, gen: r.operation.ownerGen, epoch: r.operation.ownerEpoch };
    };
    const stale = await take(1, T0 + 2600);
    const token = await take(2, T0 + 2700);
    const begin = (t: OwnerToken, actor = ADMIN) =>
      j.beginRecoveryAttempt({
        operationId: c.op.id,
        token: t,
        actor,
        decision: "uncordonOwnedCordon",
        phase: "uncordon",
        requestDigest: digest("u"),
        route: "kube:patch nodes/worker-1",
        evidence: { node: "worker-1" },
        nowMs: T0 + 2800,
      });
    await rejects(begin(token, CONTROLLER), RangeError);
    await rejects(begin(token, APPROVER), RangeError);
    refusedBy(await begin({ ...token, owner: "recover:mallory" }), "fence-mismatch");
    refusedBy(await begin(stale), "fence-mismatch");
    assertEquals((await kinds(j, c.op.id)).filter((k) => k === "recovery-attempt"), []);
    const ok = await begin(token);
    assert(ok.ok, JSON.stringify(ok));
    const respond = (t: OwnerToken, responseClass: "accepted" | "target-error", at: number) =>
      j.recordRecoveryResponse({
        attemptId: ok.attempt.id,
        token: t,
        responseClass,
        detail: responseClass,
        nowMs: at,
      });
    await refusedWith(respond(c.token, "target-error", T0 + 2900), "OwnerFenced");
    await refusedWith(respond(stale, "target-error", T0 + 2901), "OwnerFenced");
    await respond(token, "accepted", T0 + 2902);
    await refusedWith(
      respond(token, "target-error", T0 + 2903),
      "TransitionIllegal",
      /already has a response/,
    );
    const responses = (await j.events()).filter((e) => e.kind === "recovery-response");
    assertEquals(responses.map((e) => JSON.parse(e.body).class), ["accepted"]);
  });

  test("recovery mode is entered, its scopes released and left only by a recovery-admin, and a scope stays held under a live operation", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    await observe(j, { machine: "worker-2", plan, at: T0 + 2100 });
    for (const actor of [CONTROLLER, APPROVER]) {
      await refusedWith(
        () => j.enterRecoveryMode(actor, "restored", T0 + 2200),
        "RoleNotPermitted",
      );
    }
    assertEquals((await j.installation()).recoveryMode, false);
    await j.enterRecoveryMode(ADMIN, "restored backup b-4", T0 + 2300);
    for (const actor of [CONTROLLER, APPROVER]) {
      await refusedWith(
        () => j.releaseRecoveryScope("worker-2", actor, T0 + 2400),
        "RoleNotPermitted",
      );
    }
    // worker-1's operation was taken over by the entry and still holds the machine.
    assertEquals((await j.getOperation(c.op.id))!.state, "unresolved");
    await refusedWith(
      j.releaseRecoveryScope("worker-1", ADMIN, T0 + 2500),
      "TransitionIllegal",
      /still holds worker-1/,
    );
    assertEquals((await j.events()).filter((e) => e.kind === "scope-released"), []);
    await j.cancelNoAttempt(c.op.id, "recovery-admin", ADMIN, T0 + 2600);
    await j.releaseRecoveryScope("worker-1", ADMIN, T0 + 2700);
    await j.releaseRecoveryScope("worker-2", ADMIN, T0 + 2701);
    // Every scope is released: only the role stands between the caller and leaving.
    for (const actor of [CONTROLLER, APPROVER]) {
      await refusedWith(() => j.exitRecoveryMode(actor, T0 + 2800), "RoleNotPermitted");
    }
    assertEquals((await j.installation()).recoveryMode, true);
    await j.exitRecoveryMode(ADMIN, T0 + 2900);
    assertEquals((await j.installation()).recoveryMode, false);
  });

  test("the plan-cancelled and approval-epoch-stale cancellation grounds hold only when their fact does", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    for (const ground of ["plan-cancelled", "approval-epoch-stale"] as const) {
      await refusedWith(
        j.cancelNoAttempt(c.op.id, ground, CONTROLLER, T0 + 2500),
        "CancellationRefused",
        /does not hold/,
      );
    }
    assertEquals((await j.getOperation(c.op.id))!.state, "committed");
    await j.endPlan(plan, "cancelled", APPROVER, T0 + 2600);
    const done = await j.cancelNoAttempt(c.op.id, "plan-cancelled", CONTROLLER, T0 + 2700);
    assertEquals(done.state, "cancelled");
    // An approval of an earlier epoch is a ground once a recovery entry minted a new one.
    const p2 = (await approvedPlan(j, { digest: digest("9"), name: "talos-next" })).digest;
    const c2 = await committed(j, { plan: p2, at: T0 + 2800 });
    await j.enterRecoveryMode(ADMIN, "restored backup b-5", T0 + 2900);
    const stale = await j.cancelNoAttempt(c2.op.id, "approval-epoch-stale", CONTROLLER, T0 + 3000);
    assertEquals(stale.state, "cancelled");
  });

  test("only an approver approves a plan, never one revoked; automation ends no plan and freezes or unfreezes no machine", async (j) => {
    const p = await j.recordPlan(planInput());
    for (const actor of [CONTROLLER, ADMIN]) {
      await refusedWith(() => j.approvePlan(p.digest, actor, T0 + 1000), "RoleNotPermitted");
    }
    await refusedWith(
      () => j.endPlan(p.digest, "revoked", CONTROLLER, T0 + 1001),
      "RoleNotPermitted",
    );
    assertEquals((await j.getPlan(p.digest))!.state, "proposed");
    await j.approvePlan(p.digest, APPROVER, T0 + 1002);
    await j.endPlan(p.digest, "revoked", APPROVER, T0 + 1003);
    await refusedWith(() => j.approvePlan(p.digest, APPROVER, T0 + 1004), "TransitionIllegal");
    assertEquals((await j.getPlan(p.digest))!.state, "revoked");
    await refusedWith(
      () => j.setFrozen("worker-1", true, CONTROLLER, T0 + 1005),
      "RoleNotPermitted",
    );
    assertEquals(await j.frozenMachines(), []);
    await j.setFrozen("worker-1", true, ADMIN, T0 + 1006);
    for (const actor of [CONTROLLER, ADMIN]) {
      await refusedWith(() => j.setFrozen("worker-1", false, actor, T0 + 1007), "RoleNotPermitted");
    }
    assertEquals(await j.frozenMachines(), ["worker-1"]);
    await j.setFrozen("worker-1", false, APPROVER, T0 + 1008);
    assertEquals(await j.frozenMachines(), []);
  });

  test("an observation cannot name a basis its machine never allocated", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const basis = await j.startObservation("worker-1", CONTROLLER, T0 + 1500);
    const read = (b: number) =>
      j.recordObservation({
        machine: "worker-1",
        purpose: "evidence",
        planDigest: plan,
        basis: b,
        digest: "v1.13.9",
        objectUid: "uid-worker-1",
        resourceVersion: "100",
        observedGeneration: 1,
        observedAtMs: T0 + 1501,
        summary: "read",
        actor: CONTROLLER,
      });
    await rejects(read(basis + 1000), RangeError);
    assertEquals(await j.machineObservations("worker-1"), []);
    assertEquals((await read(basis)).basis, basis);
  });

  test("an owed post hook is recorded only by its operation's owner", async (j) => {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const tk = await j.takeOver({
      operationId: c.op.id,
      newOwner: "cairn-b",
      seenGen: 1,
      epoch: c.token.epoch,
      actor: CONTROLLER,
      nowMs: T0 + 2500,
    });
    assert(tk.ok);
    for (const token of [c.token, { ...c.token, owner: "cairn-x", gen: 2 }]) {
      await refusedWith(
        j.recordHookOwed({
          operationId: c.op.id,
          token,
          hook: "ceph-noout",
          namespace: "rook-ceph",
          job: { metadata: { name: "not-the-owners-job" } },
          timeoutSeconds: 60,
          preRequestDigest: digest("a"),
          postRequestDigest: digest("b"),
          nowMs: T0 + 2600,
        }),
        "OwnerFenced",
      );
    }
    assertEquals((await kinds(j, c.op.id)).filter((k) => k === "hook-owed"), []);
  });

  test("an owed post hook is claimed only once its operation is terminal, and only in the current epoch", async (j) => {
    const A: Hook = { hook: "drain-guard", pre: digest("1"), post: digest("2") };
    const h = await hooked(j, [A], [{ phase: "pre-hook", digest: A.pre }], false);
    assertEquals((await j.getOperation(h.op.id))!.state, "sending");
    assertEquals(await h.states(), ["drain-guard:owed"]);
    const live = await h.claim("drain-guard", h.t);
    assertEquals([live.ok, !live.ok && live.cause], [false, "scope-held"]);
    // The step's own request is refused by validation: the operation is settled.
    const a = await j.beginAttempt({
      ...attemptInput(h.op.id, h.token, h.evidence, h.t + 1),
      phase: "config-apply",
    });
    assert(a.ok);
    await j.recordResponse({
      attemptId: a.attempt.id,
      token: h.token,
      responseClass: "rejected-pre-mutation",
      detail: "InvalidArgument",
      nowMs: h.t + 2,
    });
    assertEquals((await j.getOperation(h.op.id))!.state, "rejected");
    // A restore under the controller: its epoch is superseded (the scope released, so only the
    // epoch stands between it and the claim).
    const current = await j.enterRecoveryMode(ADMIN, "restored backup b-6", h.t + 3);
    await j.releaseRecoveryScope("worker-1", ADMIN, h.t + 4);
    const stale = await h.claim("drain-guard", h.t + 5, h.epoch);
    assertEquals([stale.ok, !stale.ok && stale.cause], [false, "epoch-superseded"]);
    assertEquals(await h.states(), ["drain-guard:owed"]);
    const ok = await h.claim("drain-guard", h.t + 6, current);
    assert(ok.ok, JSON.stringify(ok));
    assertEquals(await h.states(), ["drain-guard:claimed"]);
  });

  test("a post hook is owed only after its own pre hook, never when the step sent it, and one hook's claim settles no other", async (j) => {
    const A: Hook = { hook: "a", pre: digest("1"), post: digest("2") };
    const B: Hook = { hook: "b", pre: digest("3"), post: digest("4") };
    const C: Hook = { hook: "c", pre: digest("5"), post: digest("6") };
    const D: Hook = { hook: "d", pre: digest("7"), post: digest("8") };
    const h = await hooked(j, [A, B, C, D], [
      { phase: "pre-hook", digest: A.pre },
      { phase: "pre-hook", digest: C.pre },
      { phase: "pre-hook", digest: D.pre },
      { phase: "post-hook", digest: C.post },
    ], true);
    // b's pre hook never went out: nothing to undo. c's post hook went out in the step.
    assertEquals(await h.states(), ["a:owed", "c:sent-in-step", "d:owed"]);
    for (const hook of ["b", "c"]) {
      const r = await h.claim(hook, h.t);
      assertEquals([r.ok, !r.ok && r.cause], [false, "not-owed"], hook);
    }
    const a = await h.claim("a", h.t + 1);
    assert(a.ok, JSON.stringify(a));
    assertEquals(await h.states(), ["a:claimed", "c:sent-in-step", "d:owed"]);
    const blocked = await commitElsewhere(j, h.t + 2);
    assert(!blocked.ok && blocked.cause === "hook-owed", JSON.stringify(blocked));
    assert(/post hook d /.test(blocked.detail), blocked.detail);
    await h.discharge("a", a.claimId, h.t + 3);
    assertEquals(await h.states(), ["a:discharged", "c:sent-in-step", "d:owed"]);
    const d = await h.claim("d", h.t + 4);
    assert(d.ok, JSON.stringify(d));
    await h.discharge("d", d.claimId, h.t + 5);
    assert((await commitElsewhere(j, h.t + 6)).ok);
  });

  test("an owed post hook is discharged once, only under its own claim", async (j) => {
    const A: Hook = { hook: "a", pre: digest("1"), post: digest("2") };
    const B: Hook = { hook: "b", pre: digest("3"), post: digest("4") };
    const h = await hooked(j, [A, B], [
      { phase: "pre-hook", digest: A.pre },
      { phase: "pre-hook", digest: B.pre },
    ], true);
    const head = (await j.events()).length;
    // No claim: nothing was sent, so nothing can be recorded as its outcome.
    await refusedWith(h.discharge("a", "hkc_none", h.t), "OperationNotFound");
    const a = await h.claim("a", h.t + 1);
    assert(a.ok, JSON.stringify(a));
    // a's claim does not discharge b, which was never sent.
    await refusedWith(h.discharge("b", a.claimId, h.t + 2), "OperationNotFound");
    assertEquals((await j.events()).length, head + 1, "only the claim was written");
    assertEquals(await h.states(), ["a:claimed", "b:owed"]);
    await h.discharge("a", a.claimId, h.t + 3);
    await refusedWith(
      h.discharge("a", a.claimId, h.t + 4),
      "TransitionIllegal",
      /already discharged/,
    );
    assertEquals(await h.states(), ["a:discharged", "b:owed"]);
    assertEquals((await kinds(j, h.op.id)).filter((k) => k === "hook-discharged").length, 1);
  });
}
