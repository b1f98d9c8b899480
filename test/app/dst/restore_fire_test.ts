/**
 * The journal-restore invariants of the simulation campaign (14, 15, 17; docs/dst.md) are not
 * vacuous: each fires on a deliberately broken executor (`ExecuteOptions.variant`) on a fixed
 * seed with a real restore (the journal's rows replaced with an earlier backup, then a recovery
 * entry), and the correct executor passes the same seed and schedule.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { type InvariantId, INVARIANTS } from "../../../src/app/dst/invariants.ts";
import { runSeed, type SeedOptions, type Variant } from "../../../src/app/dst/run_seed.ts";
import type { DstEvent } from "../../../src/app/dst/schedule.ts";
import type { AttemptRecord, Journal } from "../../../src/ports/journal.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
/** The seed invariants_fire_test.ts uses: a TalosUpgrade of two workers that completes. */
const BASE = { seed: 3, kind: "TalosUpgrade", catalogue, profile: "ci" as const };

/** The 1-based index of the `nth` write point named `name` in a clean run. */
async function pointOf(name: string, nth: number): Promise<number> {
  const clean = await runSeed({ ...BASE, events: [] });
  let seen = 0;
  const i = clean.pointNames.findIndex((p) => p === name && ++seen === nth);
  assert(i >= 0, `no ${nth}th ${name} in ${clean.pointNames.join(" ")}`);
  return i + 1;
}

async function fires(
  invariant: InvariantId,
  brokenBy: Variant | Pick<SeedOptions, "journalVariant">,
  events: readonly DstEvent[],
) {
  const correct = await runSeed({ ...BASE, events });
  assertEquals(correct.violation, undefined, `the correct executor: ${correct.violation?.detail}`);
  assertEquals(correct.error, undefined);
  const broken = await runSeed({
    ...BASE,
    events,
    ...(typeof brokenBy === "function" ? { variant: brokenBy } : brokenBy),
  });
  assert(broken.violation, `invariant ${invariant} did not fire (end ${broken.end})`);
  assertEquals(
    broken.violation.invariant,
    invariant,
    `expected ${invariant} (${INVARIANTS[invariant]}), got: ${broken.violation.detail}`,
  );
}

/** Whether `e` is the journal refusing a controller the restore superseded. */
function fenced(e: unknown): boolean {
  return e instanceof CairnError &&
    ["EpochSuperseded", "OwnerFenced", "OperationNotFound"].includes(e.reason);
}

Deno.test("dst invariant 14 fires when the executor, fenced by a journal restore, sends anyway", async () => {
  // Restored right after the first worker's second attempt committed, from a backup taken at the
  // first commitment: the controller that ran before goes on, its journal acts refused.
  const atPoint = await pointOf("attempt:after-commit", 2);
  const last: { attempt?: AttemptRecord } = {};
  // Wraps the journal the executor is given (its health gate records through it too).
  const ignoresTheFence = (j: Journal): Journal => {
    // A refused act answers as if it had been recorded (an id, a basis, the input echoed), so
    // the executor goes on as if nothing fenced it.
    const swallow = <A extends unknown[], R>(f: (...a: A) => Promise<R>, p: string) => (...a: A) =>
      f(...a).catch((e) => {
        if (!fenced(e)) throw e;
        const input = a[0] as Record<string, unknown>;
        const fake: Record<string, unknown> = {
          startObservation: 1,
          recordObservation: { ...input, id: "obs_fenced", basis: 1, revision: 1 },
          recordHealthRound: "hr_fenced",
          recordDispatchCheck: 0,
        };
        return fake[p] as R;
      });
    return new Proxy(j, {
      get(target, p) {
        if (p === "beginAttempt") {
          return async (input: Parameters<Journal["beginAttempt"]>[0]) => {
            const r = await j.beginAttempt(input).catch((e) => {
              if (fenced(e)) return { ok: false as const, cause: "fenced", detail: "" };
              throw e;
            });
            if (r.ok) last.attempt = r.attempt;
            // Refused: it sends on the attempt it was last admitted.
            return r.ok || !last.attempt ? r : { ok: true as const, attempt: last.attempt };
          };
        }
        const v = Reflect.get(target, p, target);
        if (typeof v !== "function") return v;
        const bound = v.bind(target);
        return [
            "recordPhase",
            "recordResponse",
            "transition",
            "startObservation",
            "recordObservation",
            "recordHealthRound",
            "recordDispatchCheck",
          ].includes(String(p))
          ? swallow(bound, String(p))
          : bound;
      },
    }) as Journal;
  };
  await fires(14, { journalVariant: ignoresTheFence }, [{ kind: "restore", atPoint, backupAt: 1 }]);
});

Deno.test("dst invariant 15 fires when the executor approves its plan again after a journal restore", async () => {
  // The backup holds the first worker completed; the restore comes once the second is committed.
  // The recovery admin releases every scope (nothing live in the restored journal) and leaves
  // recovery mode; the successor's commitment is refused for the stale approval, unless the
  // executor approves the plan again in the new epoch.
  const backupAt = await pointOf("transition:verifying->completed", 1);
  const atPoint = await pointOf("commit:after-commit", 2);
  const reapproves: Variant = (d) => {
    const j = d.journal;
    const journal = new Proxy(j, {
      get(target, p) {
        if (p === "commit") {
          return async (input: Parameters<Journal["commit"]>[0]) => {
            await j.approvePlan(
              input.planDigest,
              { identity: "dst-approver", role: "approver" },
              input.nowMs,
            ).catch(() => undefined);
            return await j.commit(input);
          };
        }
        const v = Reflect.get(target, p, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as Journal;
    return { ...d, journal };
  };
  await fires(15, reapproves, [{ kind: "restore", atPoint, backupAt }]);
});

Deno.test("dst invariant 17 fires when the executor, fenced by a journal restore, records its acts without the epoch it started in", async () => {
  // Restored when the first worker's operation completes, from a backup taken at its commitment:
  // the controller that ran before goes on to the post-gate round, an act without an owner token.
  // Carrying its epoch, the round is refused (EpochSuperseded) and the controller stops; without
  // it, the round is recorded in the new epoch as if the controller were current.
  const atPoint = await pointOf("transition:verifying->completed", 1);
  const backupAt = await pointOf("commit:after-commit", 1);
  // Wraps the journal the executor is given (its health gate records through it too).
  const dropsItsEpoch = (j: Journal): Journal =>
    new Proxy(j, {
      get(target, p) {
        if (p === "startObservation") {
          return (machine: string, actor: Parameters<Journal["startObservation"]>[1], at: number) =>
            j.startObservation(machine, actor, at);
        }
        if (p === "recordObservation" || p === "recordHealthRound" || p === "recordDispatchCheck") {
          const f = Reflect.get(target, p, target) as (i: { epoch?: string }) => Promise<unknown>;
          return ({ epoch: _dropped, ...input }: { epoch?: string }) => f.call(target, input);
        }
        const v = Reflect.get(target, p, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as Journal;
  await fires(17, { journalVariant: dropsItsEpoch }, [{ kind: "restore", atPoint, backupAt }]);
});
