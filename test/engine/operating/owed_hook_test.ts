/**
 * "A post hook always runs when its pre hook was attempted", through a lost response: the step's
 * own post hook cannot go out (the journal admits nothing more while an attempt is unaccounted),
 * so it stays OWED in the journal — shown by `cairn status` and the execution report — and is sent
 * exactly once as soon as the operation is settled (accounted and classified by the recovery
 * rules): by `cairn recover --classify` itself, or, when it could not (a freeze), by the rollout
 * before anything else on that node; then the rollout continues.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { classifyWithBoundPolicy } from "../../../src/app/recover_wiring.ts";
import { buildStatus, statusText } from "../../../src/cli/status.ts";
import { JOBS } from "../../../src/engine/operating/hooks.ts";
import { accountAttempt } from "../../../src/engine/recovery/recover_decisions.ts";
import { sendOwedHooks } from "../../../src/engine/operating/owed_hooks.ts";
import { uncordonOwned } from "../../../src/engine/recovery/recover_uncordon.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { ROOT } from "../../_helpers/twin_world.ts";
import type { Journal } from "../../../src/ports/journal.ts";

const IMAGE = "quay.io/ceph/ceph:v19@sha256:" + "a".repeat(64);
const HOOKS = `  hooks:
    - name: ceph-noout
      namespace: rook-ceph
      image: ${IMAGE}
      timeoutSeconds: 300
      pre:
        command: [ceph, osd, set, noout]
      post:
        command: [ceph, osd, unset, noout]
`;
const ADMIN = "carol@example.com";

type Job = { metadata: { name: string; annotations?: Record<string, string> }; spec: unknown };

/**
 * worker-1's reboot response is lost after its pre hook ran: the step is unresolved and its post
 * hook owed. Returns the world and the steps a recovery-admin takes: account the reboot after the
 * settle floor, lift the operation's own cordon, classify.
 */
async function lostRebootAfterPreHook() {
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    editPlan: (t) => t + HOOKS,
    faults: [{ kind: "lose-response", point: "talos.Reboot", target: "worker-1" }],
  });
  const jobs = async () =>
    (await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" })).items as unknown as Job[];
  const first = await w.run();
  assertEquals(first.nodes.map((n) => [n.node, n.state, n.reason]), [
    ["worker-1", "unresolved", "RebootResponseLost"],
  ]);
  const opId = first.nodes[0]!.operationId!;
  const [op] = await w.operations();
  const stoppedAt = w.twin.clock.now();
  const cluster = {
    kube: w.twin.kube,
    talos: w.twin.talos,
    clock: w.twin.clock,
    callTimeoutMs: (ms: number) => ms,
  };
  const account = () =>
    accountAttempt(w.journal, cluster, {
      operationId: opId,
      attemptId: op!.attempts.find((a) => a.phase === "reboot")!.id,
      actor: ADMIN,
      evidence: "worker-1 rebooted into v1.14.2 (boot id changed)",
      settleFloorMs: 30_000,
      executorStoppedAtMs: stoppedAt,
    });
  return {
    w,
    first,
    opId,
    op: op!,
    jobs,
    /** The reboot landed; the lost attempt is accounted after the settle floor, the cordon lifted. */
    async settle() {
      await w.twin.time.advanceTo(w.twin.clock.now() + 900_000);
      // The first recovery read starts the settle floor; the decision comes after it.
      await account().then(() => assert(false, "accounted before the settle floor"), () => {});
      await w.twin.time.advanceTo(w.twin.clock.now() + 31_000);
      await account();
      await uncordonOwned(w.journal, cluster, { operationId: opId, actor: ADMIN });
    },
    /**
     * Settled and classified `completed` while the cluster was frozen, so the classification
     * could not send the owed post hook: it stays owed for the next controller.
     */
    async owedAfterFrozenClassification() {
      await this.settle();
      const freeze = (frozen: boolean) =>
        w.journal.setClusterFrozen({
          cluster: w.bound.plan.metadata.cluster,
          frozen,
          reason: frozen ? "storage maintenance" : "done",
          actor: { identity: "dave@example.com", role: "approver" },
          nowMs: w.twin.clock.now(),
        });
      await freeze(true);
      assertEquals((await this.classify()).state, "completed");
      await freeze(false);
    },
    /** `cairn recover OP --classify`, through its own wiring. */
    classify: () =>
      classifyWithBoundPolicy(w.journal, cluster, {
        clock: w.twin.clock,
        timeoutClock: w.twin.timeoutClock,
        wrap: (p) => p,
        callTimeoutMs: (ms) => ms,
      }, {
        operationId: opId,
        actor: ADMIN,
        policyPath: join(ROOT, "policies/home-ops.yaml"),
        writeLog: () => {},
      }),
  };
}

/** A journal restore as its recovery admin records it: a new epoch, every free scope released. */
async function restoreJournal(j: Journal, nowMs: number): Promise<number> {
  const admin = { identity: ADMIN, role: "recovery-admin" as const };
  await j.enterRecoveryMode(admin, "journal restored from a backup", nowMs);
  for (const op of await j.listOperations()) {
    await j.releaseRecoveryScope(op.machine, admin, nowMs).catch(() => undefined);
  }
  await j.exitRecoveryMode(admin, nowMs);
  return (await j.events()).at(-1)!.seq;
}

const w1Jobs = (jobs: readonly Job[], opId: string) =>
  jobs.filter((j) => j.metadata.annotations?.["cairn.dev/operation"] === opId)
    .map((j) => j.metadata.name.includes("-post-") ? "post" : "pre").sort();

async function owedState(w: InprocWorld, opId: string) {
  return (await w.journal.hookObligations([opId])).map((o) => [o.hook, o.state, o.outcome]);
}

Deno.test("a post hook owed after a lost reboot response is shown while the scope is held and sent exactly once by the classification that settles it", async () => {
  const t = await lostRebootAfterPreHook();
  const { w, opId } = t;
  try {
    // The step's own post hook was refused by the journal: the reboot's attempt is unaccounted.
    const facts = t.op.phases.filter((p) => p.kind === "fact" && p.phase.endsWith("-hook"))
      .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
      .map((d) => [d["stage"], d["outcome"]]);
    assertEquals(facts, [["pre", "succeeded"], ["post", "not-sent"]]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["pre"]);
    assertEquals(await owedState(w, opId), [["ceph-noout", "owed", undefined]]);

    // Status and the report show the owed post hook while the scope is held.
    const status = await buildStatus(w.journal, w.twin.clock.now());
    assertEquals(status.owedHooks?.map((h) => [h.operationId, h.machine, h.hook, h.state]), [
      [opId, "worker-1", "ceph-noout", "owed"],
    ]);
    assert(/post hook ceph-noout owed since/.test(statusText(status)), statusText(status));
    const held = await inprocReport(w, t.first);
    assert(
      /\| `worker-1` \| post \(owed\) \| `ceph-noout` \| +\| \*\*post hook owed\*\* \|/.test(held),
      held,
    );

    // A rerun while the operation is unresolved sends nothing: its scope is still held.
    const again = await w.run();
    assertEquals(again.nodes.map((n) => [n.node, n.reason]), [["worker-1", "OperationExists"]]);
    assertEquals((await t.jobs()).length, 1);

    // Settled by the recovery rules: the classification sends the owed post hook at once.
    await t.settle();
    const classified = await t.classify();
    assertEquals(classified.state, "completed");
    assert(/owed post hooks sent: 1/.test(classified.message), classified.message);
    assertEquals(await owedState(w, opId), [["ceph-noout", "discharged", "succeeded"]]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["post", "pre"]);
    assert(!(await buildStatus(w.journal, w.twin.clock.now())).owedHooks);

    // The rollout continues and never sends it again.
    const resumed = await w.run();
    assertEquals(resumed.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "completed"],
    ]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["post", "pre"]);
    const report = await inprocReport(w, resumed);
    assert(
      /\| `worker-1` \| post \(owed\) \| `ceph-noout` \| `rook-ceph\/cairn-ceph-noout-post-[0-9a-f]+` \| succeeded \|/
        .test(report),
      report,
    );
    assertEquals((await w.run()).state, "completed");
    assertEquals(
      (await t.jobs()).length,
      4,
      "pre and owed post for worker-1, pre and post for worker-2",
    );
  } finally {
    await w.close();
  }
});

Deno.test("an owed post hook the classification could not send (a freeze) is sent by the rollout before anything else on the node, once", async () => {
  const t = await lostRebootAfterPreHook();
  const { w, opId } = t;
  try {
    await t.settle();
    const cluster = w.bound.plan.metadata.cluster;
    await w.journal.setClusterFrozen({
      cluster,
      frozen: true,
      reason: "storage maintenance",
      actor: { identity: "dave@example.com", role: "approver" },
      nowMs: w.twin.clock.now(),
    });
    const classified = await t.classify();
    assertEquals(classified.state, "completed");
    assert(
      /owed post hook not settled: ClusterFrozen/.test(classified.message),
      classified.message,
    );
    assertEquals(await owedState(w, opId), [["ceph-noout", "owed", undefined]]);
    // Frozen, the rollout holds on it: nothing is sent, nothing else is committed.
    // (A hold before worker-2's commitment would wait for the unfreeze: end such a run at once.)
    const stop = new AbortController();
    const frozen = await w.run({ signal: stop.signal, observer: { onHold: () => stop.abort() } });
    assertEquals(frozen.nodes.map((n) => [n.node, n.reason]), [["worker-1", "ClusterFrozen"]]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["pre"]);
    await w.journal.setClusterFrozen({
      cluster,
      frozen: false,
      reason: "done",
      actor: { identity: "dave@example.com", role: "approver" },
      nowMs: w.twin.clock.now(),
    });
    // Unfrozen: the owed post hook goes first, then the rollout goes on to worker-2.
    const resumed = await w.run();
    assertEquals(resumed.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "completed"],
    ]);
    const [ob] = await w.journal.hookObligations([opId]);
    assertEquals([ob!.state, ob!.outcome], ["discharged", "succeeded"]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["post", "pre"]);
    const w2 = (await w.operations()).find((o) => o.operation.machine === "worker-2")!;
    assert(ob!.dischargedAtMs! <= w2.operation.createdAtMs, "sent before the next commitment");
    assertEquals((await w.run()).state, "completed");
    assertEquals(
      (await t.jobs()).length,
      4,
      "pre and owed post for worker-1, pre and post for worker-2",
    );
  } finally {
    await w.close();
  }
});

Deno.test("an owed post hook held by a frozen machine is reported as that machine's freeze, not the cluster's", async () => {
  const t = await lostRebootAfterPreHook();
  const { w, opId } = t;
  try {
    await t.settle();
    const approver = { identity: "dave@example.com", role: "approver" as const };
    await w.journal.setFrozen("worker-1", true, approver, w.twin.clock.now());
    const classified = await t.classify();
    assertEquals(classified.state, "completed");
    assert(
      /owed post hook not settled: MachineFrozen.*machine worker-1 is frozen/.test(
        classified.message,
      ),
      classified.message,
    );
    assertEquals(await owedState(w, opId), [["ceph-noout", "owed", undefined]]);
    const held = await w.run();
    assertEquals(held.nodes.map((n) => [n.node, n.reason]), [["worker-1", "MachineFrozen"]]);
    assert(/machine worker-1 is frozen/.test(held.nodes[0]!.detail), held.nodes[0]!.detail);
    assertEquals(w1Jobs(await t.jobs(), opId), ["pre"]);
    await w.journal.setFrozen("worker-1", false, approver, w.twin.clock.now());
    const resumed = await w.run();
    assertEquals(resumed.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "completed"],
    ]);
    assertEquals(w1Jobs(await t.jobs(), opId), ["post", "pre"]);
  } finally {
    await w.close();
  }
});

Deno.test("a controller started before a journal restore is refused the owed post hook's claim and sends nothing", async () => {
  const t = await lostRebootAfterPreHook();
  const { w, opId } = t;
  try {
    await t.owedAfterFrozenClassification();
    assertEquals(await owedState(w, opId), [["ceph-noout", "owed", undefined]]);
    // The controller started here; then the journal is restored (a new epoch) under it.
    const started = (await w.journal.installation()).epoch;
    await restoreJournal(w.journal, w.twin.clock.now());
    assert((await w.journal.installation()).epoch !== started);
    const op = (await w.journal.getOperation(opId))!;
    const r = await sendOwedHooks(staleController(w, w.journal, started), op);
    assertEquals(r.ok ? "sent" : r.reason, "EpochSuperseded");
    assertEquals(w1Jobs(await t.jobs(), opId), ["pre"], "no post hook Job was created");
    assertEquals(await owedState(w, opId), [["ceph-noout", "owed", undefined]]);
  } finally {
    await w.close();
  }
});

Deno.test("a controller whose journal is restored after it claimed an owed post hook records no discharge in the new epoch", async () => {
  const t = await lostRebootAfterPreHook();
  const { w, opId } = t;
  try {
    await t.owedAfterFrozenClassification();
    const started = (await w.journal.installation()).epoch;
    let exit: number | undefined;
    // The claim is the old epoch's (recorded before the restore); the Job goes out; then, while
    // the controller watches it, the journal is restored under it.
    const journal = new Proxy(w.journal, {
      get(target, p) {
        if (p === "claimOwedHook") {
          return async (input: Parameters<typeof target.claimOwedHook>[0]) => {
            const claim = await target.claimOwedHook(input);
            exit = await restoreJournal(target, w.twin.clock.now());
            return claim;
          };
        }
        const v = Reflect.get(target, p, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const op = (await w.journal.getOperation(opId))!;
    const end = await sendOwedHooks(staleController(w, journal, started), op).then(
      (r) => (r.ok ? "recorded" : r.reason),
      (e) => (e as { reason?: string }).reason,
    );
    assert(exit !== undefined, "the journal was restored after the claim");
    assertEquals(end, "EpochSuperseded");
    assertEquals(w1Jobs(await t.jobs(), opId), ["post", "pre"], "the claimed Job went out once");
    // Nothing of the old epoch's controller after the restore: the discharge was refused.
    assertEquals((await w.journal.events(exit)).map((e) => e.kind), []);
    assertEquals((await owedState(w, opId)).map(([h, s]) => [h, s]), [["ceph-noout", "claimed"]]);
  } finally {
    await w.close();
  }
});

/** The owed-hook ports of a controller that started in `epoch`, on `journal`. */
function staleController(w: InprocWorld, journal: Journal, epoch: string) {
  return {
    journal,
    clock: w.twin.clock,
    kube: w.twin.kube,
    owner: "cairn-stale",
    epoch,
    callTimeoutMs: (ms: number) => ms,
    pollIntervalMs: 1_000,
    log: w.log,
  };
}
