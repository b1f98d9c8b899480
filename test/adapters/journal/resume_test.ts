/**
 * The journal's resume act (docs/recovery.md#resume-after-a-takeover) on libSQL and PostgreSQL:
 * a controller that took an operation over in flight records its readings of the earlier owner's
 * unaccounted attempts and classifies the operation; the step's next attempt is then admitted,
 * and a later phase's continues past the read attempt. Every refusal leaves the operation
 * `unresolved` and records nothing: a Talos attempt read, an attempt without a reading, an outcome
 * the phase cannot have, an operation its own executor classified, an answer other than accepted.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import type { Phase } from "../../../src/domain/operation.ts";
import type { Journal, OwnerToken } from "../../../src/ports/journal.ts";
import {
  ADMIN,
  approvedPlan,
  APPROVER,
  attemptInput,
  committed,
  counterIds,
  observe,
  T0,
} from "../../_helpers/journal_world.ts";
import {
  type JournalStoreKind,
  LIBSQL_MEMORY,
  postgresStore,
} from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const STORES: readonly JournalStoreKind[] = [LIBSQL_MEMORY, postgresStore(await sharedPostgres())];
const B = { identity: "cairn-b", role: "controller" as const };

/** Accepted attempts of `phases`, then one attempt of `last` left without a response. */
async function inFlight(j: Journal, phases: readonly Phase[], last: Phase) {
  const plan = (await approvedPlan(j, { maxAttempts: 10 })).digest;
  const c = await committed(j, { plan });
  let at = T0 + 3000;
  for (const phase of [...phases, last]) {
    const ev = await observe(j, { at, plan, op: c.op.id });
    const r = await j.beginAttempt({ ...attemptInput(c.op.id, c.token, ev.id, at), phase });
    if (!r.ok) throw new Error(`attempt refused: ${r.cause}`);
    if (phase !== last) {
      await j.recordResponse({
        attemptId: r.attempt.id,
        token: c.token,
        responseClass: "accepted",
        detail: "ok",
        nowMs: at + 10,
      });
    }
    at += 100;
  }
  return { plan, ...c };
}

/** cairn-b takes the operation over; returns its token. */
async function takeOver(j: Journal, op: string, seenGen: number, at: number): Promise<OwnerToken> {
  const { epoch } = await j.installation();
  const r = await j.takeOver({
    operationId: op,
    newOwner: B.identity,
    seenGen,
    epoch,
    actor: B,
    nowMs: at,
  });
  if (!r.ok) throw new Error("takeover lost");
  return { owner: B.identity, gen: r.operation.ownerGen, epoch };
}

async function refusedWith(p: Promise<unknown>, text: RegExp): Promise<void> {
  await rejects(p, (e: unknown) => {
    assert(e instanceof CairnError && e.reason === "ResumeRefused", String(e));
    assert(text.test(e.message), e.message);
    return true;
  });
}

for (const store of STORES) {
  const open = async () => {
    const { url } = await store.fresh();
    return await openJournal({ url, ids: counterIds(), nowMs: T0 });
  };

  Deno.test(`${store.name}: a drain read incomplete after a takeover is accounted, the drain runs again and the step goes on`, async () => {
    const j = await open();
    try {
      const s = await inFlight(j, ["pull", "install", "cordon"], "drain");
      const tok = await takeOver(j, s.op.id, 1, T0 + 5000);
      const drain = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      const after = await j.resumeAfterTakeover({
        operationId: s.op.id,
        token: tok,
        readings: [{
          attemptId: drain.id,
          outcome: "observed-incomplete",
          evidence: { remaining: ["default/web-1"] },
        }],
        nowMs: T0 + 5100,
      });
      assertEquals(after.state, "unresolved");
      const d = (await j.showOperation(s.op.id))!;
      assertEquals(
        [d.attempts.at(-1)!.responseClass, d.attempts.at(-1)!.accountedBy],
        ["observed-incomplete", "response"],
      );
      assert(d.events.some((e) => e.kind === "classification" && e.body.includes('"resume"')));
      // The drain again, under b's token: admitted from `unresolved` by the classification.
      let at = T0 + 6000;
      for (const phase of ["drain", "reboot"] as const) {
        const ev = await observe(j, { at, plan: s.plan, op: s.op.id });
        const r = await j.beginAttempt({ ...attemptInput(s.op.id, tok, ev.id, at), phase });
        assert(r.ok, `${phase}: ${!r.ok && r.cause}`);
        await j.recordResponse({
          attemptId: r.attempt.id,
          token: tok,
          responseClass: "accepted",
          detail: "ok",
          nowMs: at + 10,
        });
        at += 100;
      }
      // The earlier owner can answer nothing any more.
      await rejects(
        j.recordResponse({
          attemptId: drain.id,
          token: s.token,
          responseClass: "accepted",
          detail: "late",
          nowMs: at,
        }),
        (e: unknown) => e instanceof CairnError && e.reason === "OwnerFenced",
      );
      assertEquals((await j.getOperation(s.op.id))!.state, "sending");
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: nothing in flight (killed between phases): the resume admits the next phase`, async () => {
    const j = await open();
    try {
      const plan = (await approvedPlan(j)).digest;
      const c = await committed(j, { plan });
      const tok = await takeOver(j, c.op.id, 1, T0 + 5000);
      await j.resumeAfterTakeover({
        operationId: c.op.id,
        token: tok,
        readings: [],
        nowMs: T0 + 5100,
      });
      const ev = await observe(j, { at: T0 + 6000, plan, op: c.op.id });
      const r = await j.beginAttempt({
        ...attemptInput(c.op.id, tok, ev.id, T0 + 6000),
        phase: "pull",
      });
      assert(r.ok);
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: resume refusals leave the operation unresolved and record nothing`, async () => {
    const j = await open();
    try {
      // A Talos call cannot be read back: an install in flight stays unresolved.
      const s = await inFlight(j, ["pull"], "install");
      const tok = await takeOver(j, s.op.id, 1, T0 + 5000);
      const install = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      const eventsBefore = (await j.showOperation(s.op.id))!.events.length;
      const resume = (readings: Parameters<Journal["resumeAfterTakeover"]>[0]["readings"]) =>
        j.resumeAfterTakeover({ operationId: s.op.id, token: tok, readings, nowMs: T0 + 5100 });
      await refusedWith(
        resume([{ attemptId: install.id, outcome: "observed-in-effect", evidence: {} }]),
        /cannot be classified from a reading/,
      );
      await refusedWith(resume([]), /unaccounted and was not read/);
      // The earlier owner's token cannot resume.
      await rejects(
        j.resumeAfterTakeover({ operationId: s.op.id, token: s.token, readings: [], nowMs: T0 }),
        (e: unknown) => e instanceof CairnError && e.reason === "OwnerFenced",
      );
      const d = (await j.showOperation(s.op.id))!;
      assertEquals([d.operation.state, d.events.length], ["unresolved", eventsBefore]);
      assertEquals(d.attempts.at(-1)!.accountedBy, null);
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: a reading must fit its phase; an operation its executor classified unresolved (a refused cordon) is not resumed, even after a takeover`, async () => {
    const j = await open();
    try {
      const s = await inFlight(j, ["pull", "install", "cordon"], "drain");
      const tok = await takeOver(j, s.op.id, 1, T0 + 5000);
      const drain = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      await refusedWith(
        j.resumeAfterTakeover({
          operationId: s.op.id,
          token: tok,
          readings: [{ attemptId: drain.id, outcome: "observed-absent", evidence: {} }],
          nowMs: T0 + 5100,
        }),
        /a drain attempt cannot be observed-absent/,
      );

      // A second operation: the cordon answered by the server with a conflict, then the
      // executor's own halt; a later takeover does not make it resumable.
      const j2 = await open();
      try {
        const t = await inFlight(j2, ["pull", "install"], "cordon");
        const cordon = (await j2.showOperation(t.op.id))!.attempts.at(-1)!;
        await j2.recordResponse({
          attemptId: cordon.id,
          token: t.token,
          responseClass: "target-error",
          detail: "conflict",
          nowMs: T0 + 4000,
        });
        const tok2 = await takeOver(j2, t.op.id, 1, T0 + 5000);
        await refusedWith(
          j2.resumeAfterTakeover({
            operationId: t.op.id,
            token: tok2,
            readings: [],
            nowMs: T0 + 5100,
          }),
          /its executor classified it unresolved/,
        );
      } finally {
        await j2.close();
      }
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: a resume names each unaccounted attempt of this operation once, and needs the plan approved and the gate open`, async () => {
    const j = await open();
    try {
      const s = await inFlight(j, ["pull", "install", "cordon"], "drain");
      const tok = await takeOver(j, s.op.id, 1, T0 + 5000);
      const drain = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      const read = { attemptId: drain.id, outcome: "observed-in-effect" as const, evidence: {} };
      const resume = (readings: typeof read[], nowMs = T0 + 5100) =>
        j.resumeAfterTakeover({ operationId: s.op.id, token: tok, readings, nowMs });
      await refusedWith(resume([read, read]), /read twice/);
      await refusedWith(
        resume([read, { ...read, attemptId: "att_elsewhere" }]),
        /no attempt att_elsewhere of this operation/,
      );
      await j.setFrozen("worker-1", true, ADMIN, T0 + 5050);
      await refusedWith(resume([read]), /frozen/);
      await j.setFrozen("worker-1", false, APPROVER, T0 + 5060);
      await j.endPlan(s.plan, "revoked", APPROVER, T0 + 5070);
      await refusedWith(resume([read]), /plan is revoked/);
      const d = (await j.showOperation(s.op.id))!;
      assertEquals([d.operation.state, d.attempts.at(-1)!.accountedBy], ["unresolved", null]);
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: a resume never passes an earlier answer other than accepted (an installer that failed)`, async () => {
    const j = await open();
    try {
      // The first install was answered by the installer failing; a safe-to-retry class let a
      // second install go, and that one was in flight when cairn-b took the operation over.
      const plan = (await approvedPlan(j, { maxAttempts: 10 })).digest;
      const c = await committed(j, { plan });
      const first = await j.beginAttempt({
        ...attemptInput(c.op.id, c.token, c.evidence, T0 + 3000),
        phase: "install",
      });
      assert(first.ok);
      await j.recordResponse({
        attemptId: first.attempt.id,
        token: c.token,
        responseClass: "target-error",
        detail: "installer exited 1",
        nowMs: T0 + 3010,
      });
      const rec = await observe(j, { purpose: "recovery", at: T0 + 3100 });
      await j.classifySafeToRetry(c.op.id, c.token, rec.id, T0 + 3110);
      const ev = await observe(j, { at: T0 + 3200, plan, op: c.op.id });
      const second = await j.beginAttempt({
        ...attemptInput(c.op.id, c.token, ev.id, T0 + 3210),
        phase: "install",
      });
      assert(second.ok);
      const tok = await takeOver(j, c.op.id, 1, T0 + 5000);
      // The failed first install stops the resume before anything else is looked at.
      await refusedWith(
        j.resumeAfterTakeover({ operationId: c.op.id, token: tok, readings: [], nowMs: T0 + 5100 }),
        /attempt 1 \(install\) was answered target-error/,
      );
      assertEquals((await j.getOperation(c.op.id))!.state, "unresolved");
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: a resumed operation whose next attempt went out is sending: no second resume`, async () => {
    const j = await open();
    try {
      const s = await inFlight(j, ["pull", "install", "cordon"], "drain");
      const tokB = await takeOver(j, s.op.id, 1, T0 + 9000);
      const drain = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      await j.resumeAfterTakeover({
        operationId: s.op.id,
        token: tokB,
        readings: [{ attemptId: drain.id, outcome: "observed-incomplete", evidence: {} }],
        nowMs: T0 + 9100,
      });
      const ev2 = await observe(j, { at: T0 + 9200, plan: s.plan, op: s.op.id });
      const again = await j.beginAttempt({
        ...attemptInput(s.op.id, tokB, ev2.id, T0 + 9210),
        phase: "drain",
      });
      assert(again.ok);
      await refusedWith(
        j.resumeAfterTakeover({
          operationId: s.op.id,
          token: tokB,
          readings: [],
          nowMs: T0 + 9300,
        }),
        /it is sending/,
      );
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: a stopped executor's own in-flight attempt is answered, never read by its own resume`, async () => {
    const j = await open();
    try {
      const s = await inFlight(j, ["pull", "install", "cordon"], "drain");
      await j.transition({
        operationId: s.op.id,
        token: s.token,
        to: "unresolved",
        reason: "StoppedByOperator: cairn stop",
        nowMs: T0 + 5000,
      });
      const drain = (await j.showOperation(s.op.id))!.attempts.at(-1)!;
      await refusedWith(
        j.resumeAfterTakeover({
          operationId: s.op.id,
          token: s.token,
          readings: [{ attemptId: drain.id, outcome: "observed-in-effect", evidence: {} }],
          nowMs: T0 + 5100,
        }),
        /this owner's own/,
      );
      assertEquals((await j.showOperation(s.op.id))!.attempts.at(-1)!.accountedBy, null);
    } finally {
      await j.close();
    }
  });
}
