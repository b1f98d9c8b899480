/**
 * Owed post hooks in the journal (adapters/journal/hook_obligations.ts), for every store: once a
 * pre hook's attempt is recorded and its operation has ended without the post hook, the obligation
 * is `owed`; it refuses the machine's next commitment (comparison 4, `hook-owed`), is claimed by
 * exactly one controller, and once discharged no longer holds the machine. Run by the journal
 * contract (libSQL and PostgreSQL) and on its own (`test/adapters/journal/hook_obligation_test.ts`).
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { CairnError } from "../../src/domain/errors.ts";
import type { Journal, OwnerToken } from "../../src/ports/journal.ts";
import {
  ADMIN,
  approvedPlan,
  APPROVER,
  committed,
  observe,
  T0,
} from "../_helpers/journal_world.ts";

const PRE = "a".repeat(64);
const POST = "b".repeat(64);

/** The pre hook's Job create answered, then the machine refuses its request by validation. */
async function rejectAfterHook(
  j: Journal,
  a: { opId: string; token: OwnerToken; evidence: string; hook: string },
) {
  await j.recordResponse({
    attemptId: a.hook,
    token: a.token,
    responseClass: "accepted",
    detail: "created",
    nowMs: T0 + 2250,
  });
  const apply = await j.beginAttempt({
    operationId: a.opId,
    token: a.token,
    phase: "config-apply",
    requestDigest: "c".repeat(64),
    route: "apid:node=10.5.0.6",
    evidenceId: a.evidence,
    transportDeadlineMs: T0 + 60_000,
    verificationDeadlineMs: T0 + 600_000,
    nowMs: T0 + 2260,
  });
  assert(apply.ok, JSON.stringify(apply));
  return await j.recordResponse({
    attemptId: apply.attempt.id,
    token: a.token,
    responseClass: "rejected-pre-mutation",
    detail: "rejected",
    nowMs: T0 + 2300,
  });
}

export async function owedHookContract(j: Journal): Promise<void> {
  const a = await approvedPlan(j);
  const { op, token, evidence } = await committed(j, { plan: a.digest });
  await j.recordHookOwed({
    operationId: op.id,
    token,
    hook: "ceph-noout",
    namespace: "rook-ceph",
    job: { metadata: { name: "cairn-ceph-noout-post-1" } },
    timeoutSeconds: 300,
    preRequestDigest: PRE,
    postRequestDigest: POST,
    nowMs: T0 + 2100,
  });
  const states = async () => (await j.hookObligations([op.id])).map((o) => o.state);
  assertEquals(await states(), [], "nothing is owed before the pre hook's attempt");
  const att = await j.beginAttempt({
    operationId: op.id,
    token,
    phase: "pre-hook",
    requestDigest: PRE,
    route: "kube-apiserver",
    evidenceId: evidence,
    transportDeadlineMs: T0 + 60_000,
    verificationDeadlineMs: T0 + 600_000,
    nowMs: T0 + 2200,
  });
  assert(att.ok);
  // The pre hook's Job created, then the machine's definitive pre-mutation rejection of the only
  // request to it ends the operation (`rejected`; a hook's Job create is not a machine request).
  const after = await rejectAfterHook(j, { opId: op.id, token, evidence, hook: att.attempt.id });
  assertEquals(after.state, "rejected");
  assertEquals(await states(), ["owed"]);
  // Another plan's commitment on the same machine is refused while the post hook is owed.
  const b = await approvedPlan(j, { digest: "e".repeat(64), name: "talos-other" });
  const ev = await observe(j, { machine: "worker-1", at: T0 + 3000, plan: b.digest });
  const { epoch } = await j.installation();
  const commit = () =>
    j.commit({
      planDigest: b.digest,
      step: "worker-1/0",
      evidenceId: ev.id,
      owner: "cairn-b",
      epoch,
      nowMs: T0 + 3100,
    });
  const refused = await commit();
  assert(
    !refused.ok && refused.cause === "hook-owed" && refused.comparison === 4,
    JSON.stringify(refused),
  );
  // Exactly one claim.
  const claim = (owner: string) =>
    j.claimOwedHook({
      operationId: op.id,
      hook: "ceph-noout",
      claimant: owner,
      epoch,
      nowMs: T0 + 3200,
    });
  const first = await claim("cairn-a (controller)");
  const second = await claim("cairn-b (controller)");
  assert(first.ok, JSON.stringify(first));
  assertEquals([second.ok, !second.ok && second.cause], [false, "not-owed"]);
  assertEquals(first.job, { metadata: { name: "cairn-ceph-noout-post-1" } });
  assertEquals(await states(), ["claimed"]);
  await j.recordHookDischarge({
    operationId: op.id,
    hook: "ceph-noout",
    claimId: first.claimId,
    claimant: "cairn-a (controller)",
    responseClass: "accepted",
    outcome: "succeeded",
    jobRef: "rook-ceph/cairn-ceph-noout-post-1",
    detail: "Complete",
    nowMs: T0 + 3300,
  });
  assertEquals(await states(), ["discharged"]);
  const ok = await commit();
  assert(ok.ok, JSON.stringify(ok));
  assert((await j.verifyChain()).ok);
}

/**
 * An owed post hook is a send like any other: a frozen machine or a recovery scope not yet
 * released in the current epoch refuses its claim, as comparison 6 refuses an attempt (a restored
 * journal can show as owed a hook that was already sent after its backup).
 */
export async function owedHookGateContract(j: Journal): Promise<void> {
  const a = await approvedPlan(j);
  const { op, token, evidence } = await committed(j, { plan: a.digest });
  await j.recordHookOwed({
    operationId: op.id,
    token,
    hook: "ceph-noout",
    namespace: "rook-ceph",
    job: { metadata: { name: "cairn-ceph-noout-post-1" } },
    timeoutSeconds: 300,
    preRequestDigest: PRE,
    postRequestDigest: POST,
    nowMs: T0 + 2100,
  });
  const att = await j.beginAttempt({
    operationId: op.id,
    token,
    phase: "pre-hook",
    requestDigest: PRE,
    route: "kube-apiserver",
    evidenceId: evidence,
    transportDeadlineMs: T0 + 60_000,
    verificationDeadlineMs: T0 + 600_000,
    nowMs: T0 + 2200,
  });
  assert(att.ok);
  await rejectAfterHook(j, { opId: op.id, token, evidence, hook: att.attempt.id });
  const claim = async (at: number) =>
    await j.claimOwedHook({
      operationId: op.id,
      hook: "ceph-noout",
      claimant: "cairn-a (controller)",
      epoch: (await j.installation()).epoch,
      nowMs: at,
    });
  await j.setFrozen("worker-1", true, APPROVER, T0 + 2400);
  const frozen = await claim(T0 + 2500);
  assertEquals([frozen.ok, !frozen.ok && frozen.cause], [false, "machine-frozen"]);
  await j.setFrozen("worker-1", false, APPROVER, T0 + 2600);
  // The cluster's freeze is its own cause: a frozen machine is never reported as a frozen cluster.
  const freezeCluster = (frozen: boolean, at: number) =>
    j.setClusterFrozen({
      cluster: "home-ops",
      frozen,
      reason: frozen ? "storage maintenance" : "done",
      actor: APPROVER,
      nowMs: at,
    });
  await freezeCluster(true, T0 + 2610);
  const clusterFrozen = await claim(T0 + 2620);
  assertEquals([clusterFrozen.ok, !clusterFrozen.ok && clusterFrozen.cause], [
    false,
    "cluster-frozen",
  ]);
  await freezeCluster(false, T0 + 2630);
  await j.enterRecoveryMode(ADMIN, "restored backup b-1", T0 + 2700);
  const held = await claim(T0 + 2800);
  assertEquals([held.ok, !held.ok && held.cause], [false, "gate-recovery"]);
  assertEquals((await j.hookObligations([op.id])).map((o) => o.state), ["owed"]);
  await j.releaseRecoveryScope("worker-1", ADMIN, T0 + 2900);
  const released = await claim(T0 + 3000);
  assert(released.ok, JSON.stringify(released));
  // The claim's epoch superseded before its discharge (a journal restore under the controller):
  // the discharge is refused and writes nothing; in the current epoch it is recorded.
  const claimedIn = (await j.installation()).epoch;
  const current = await j.enterRecoveryMode(ADMIN, "restored backup b-2", T0 + 3100);
  const discharge = (epoch: string) =>
    j.recordHookDischarge({
      operationId: op.id,
      hook: "ceph-noout",
      claimId: released.claimId,
      claimant: "cairn-a (controller)",
      responseClass: "accepted",
      outcome: "succeeded",
      jobRef: "rook-ceph/cairn-ceph-noout-post-1",
      detail: "Complete",
      nowMs: T0 + 3200,
      epoch,
    });
  const head = (await j.events()).length;
  await rejects(discharge(claimedIn), (e: unknown) => {
    assert(e instanceof CairnError && e.reason === "EpochSuperseded", String(e));
    return true;
  });
  assertEquals((await j.events()).length, head, "a refused discharge writes nothing");
  assertEquals((await j.hookObligations([op.id])).map((o) => o.state), ["claimed"]);
  await discharge(current);
  assertEquals((await j.hookObligations([op.id])).map((o) => o.state), ["discharged"]);
}
