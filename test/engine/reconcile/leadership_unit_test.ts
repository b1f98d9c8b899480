/**
 * The reconcile loop with two replicas (in process): one libSQL file journal opened by each, the
 * twin's models behind the in-process ports, and a Lease in the twin's store. Only the leader
 * binds and executes merged plans; the standby previews plan branches with zero writes and says
 * on `/readyz` that it stands by and who leads; after a hand-over the new leader runs the plan
 * from the journal.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { LeaderElector } from "../../../src/engine/leadership/elector.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { InprocLeaseStore } from "../../../src/sim/inproc/lease.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "talos-v1.14.2";
const PLAN_PATH = `plans/${PLAN}.yaml`;
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

async function twoReplicas() {
  const twin = startInprocTwin({ description: await homeOps() });
  const dir = await Deno.makeTempDir({ prefix: "cairn-replicas-" });
  const url = `file:${join(dir, "journal.db")}`;
  const source = new MemoryPlanSource("main", () => twin.clock.now());
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (
    const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) files[f] = await Deno.readTextFile(join(ROOT, f));
  await source.commit("main", files);
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const allowed = `${alice.allowedSignersLine}\n${bob.allowedSignersLine}\n`;
  const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
  const example = await Deno.readTextFile(join(ROOT, PLAN_PATH));
  const planText = onlyNodes("worker-1")(example);
  const signBoth = async (text: string) =>
    (await alice.sign(new TextEncoder().encode(text))) +
    (await bob.sign(new TextEncoder().encode(text)));
  const sig = await signBoth(planText);
  // A second plan for the same cluster (so it queues behind the first): worker-2 only.
  const secondText = onlyNodes("worker-2")(example).replace(`name: ${PLAN}`, `name: ${PLAN}-w2`);
  const secondSig = await signBoth(secondText);
  const stopper = new AbortController();
  const journals: Journal[] = [];
  const replica = async (identity: string) => {
    const journal = await openJournal({ url, ids: counterIds(identity), nowMs: twin.clock.now() });
    journals.push(journal);
    const sink = new MemoryReportSink();
    const log = new MemoryLogger();
    const elector = new LeaderElector({
      store: new InprocLeaseStore(twin.store, "cairn-system", "cairn-leader"),
      clock: twin.sim,
      log,
      config: { identity, ...TIMING },
    });
    const reconciler = await Reconciler.create({
      source,
      sink,
      journal,
      executor: planExecutor({
        journal,
        cluster: { kube: twin.kube, talos: twin.talos },
        clock: twin.clock,
        timeoutClock: twin.timeoutClock,
        log,
        owner: `ctl_${identity}`,
        callTimeoutMs: (ms) => ms,
        pollIntervalMs: 5_000,
        roundIntervalMs: 30_000,
      }, { trust, requiredApprovals: 1 }),
      renderer: reconcileReports(),
      trust,
      wakeup: { wait: () => Promise.resolve("stop") },
      clock: twin.clock,
      waitClock: twin.timeoutClock,
      log,
      watchedBranch: "main",
      isPlanBranch: (b) => b.startsWith("plan/"),
      reportBranch: "reports",
      requiredApprovals: 1,
      pollIntervalMs: 30_000,
      signal: stopper.signal,
      leadership: elector,
    });
    return { journal, sink, log, elector, reconciler };
  };
  return {
    twin,
    source,
    planText,
    sig,
    secondText,
    secondSig,
    replica,
    installs: () => twin.talos.stats.mutating["LifecycleService/Upgrade"] ?? 0,
    async close() {
      stopper.abort();
      twin.stop();
      for (const j of journals) await j.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("two replicas: the standby previews and binds nothing; after a hand-over it runs the plan", async () => {
  const w = await twoReplicas();
  try {
    const a = await w.replica("cairn-a"), b = await w.replica("cairn-b");
    await a.elector.round();
    await b.elector.round();
    await w.source.commit("main", { [PLAN_PATH]: w.planText, [`${PLAN_PATH}.sig`]: w.sig });
    await w.source.commit(
      "plan/next",
      { "plans/next.yaml": w.planText.replace(PLAN, "next") },
      "main",
    );

    // The standby: previews the plan branch, binds and runs nothing, says who leads.
    await b.reconciler.cycle();
    await b.reconciler.settled();
    assertEquals(b.reconciler.readiness(), { ready: true, role: "standby", leader: "cairn-a" });
    assert(b.sink.files.has("reports/next/preview/plan~next.md"), [...b.sink.files.keys()].join());
    assertEquals(b.sink.files.has(`reports/${PLAN}/execution.md`), false);
    assertEquals((await b.journal.listOperations()).length, 0);
    assertEquals(await b.journal.nameBindings(), [], "the standby bound nothing");
    assertEquals(w.installs(), 0);

    // The leader hands over before doing anything (its node is about to be drained, say).
    assertEquals(a.reconciler.readiness().role, "leader");
    assert(await a.elector.release("test hand-over"));
    await a.reconciler.cycle();
    await a.reconciler.settled();
    assertEquals(a.reconciler.readiness(), { ready: true, role: "standby", leader: "" });
    assertEquals(w.installs(), 0, "a replica that handed over runs nothing");

    // The standby takes the released Lease at its next round and runs the plan.
    await w.twin.sim.advance(TIMING.retryPeriodMs);
    await b.elector.round();
    assertEquals(b.reconciler.readiness().role, "leader");
    await b.reconciler.cycle();
    await b.reconciler.settled();
    assertEquals(b.reconciler.finished().map((x) => [x.plan, x.end.state]), [[PLAN, "completed"]]);
    assertEquals(w.installs(), 1);
    const ops = await a.journal.listOperations();
    assertEquals(ops.map((o) => [o.machine, o.owner, o.state]), [
      ["worker-1", "ctl_cairn-b", "completed"],
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("a leader whose renewals stopped starts nothing more: the plan queued behind a running one stays queued", async () => {
  const w = await twoReplicas();
  try {
    const a = await w.replica("cairn-a");
    await a.elector.round();
    await w.source.commit("main", { [PLAN_PATH]: w.planText, [`${PLAN_PATH}.sig`]: w.sig });
    await w.source.commit("main", {
      [`plans/${PLAN}-w2.yaml`]: w.secondText,
      [`plans/${PLAN}-w2.yaml.sig`]: w.secondSig,
    });
    // One cycle binds both and starts the first; the second waits for the cluster's slot. No
    // election round runs meanwhile (a stalled elector): the rollout's own time passes the
    // renew deadline, so when the first run ends this replica no longer leads.
    await a.reconciler.cycle();
    await a.reconciler.settled();
    assertEquals(a.reconciler.finished().map((x) => x.plan), [PLAN]);
    assertEquals(a.reconciler.readiness().role, "standby");
    assertEquals(w.installs(), 1, "the queued plan did not start");
    assert(a.log.entries.some((e) => e.msg === "leadership lost"));
  } finally {
    await w.close();
  }
});
