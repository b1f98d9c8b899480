/**
 * A `cairn reconcile` process carries the journal epoch it started in and acts in it alone
 * (docs/operation-model.md#fencing: a process that finds the journal in another epoch stops and
 * exits for its supervisor to start it again). Once the journal's epoch is another (a recovery entry, a journal restore), the
 * loop binds and runs nothing more, stops its runs and `run` throws `EpochSuperseded` naming both
 * epochs, so the process exits non-zero and its supervisor restarts it. In process: the twin's
 * models behind the in-process ports, a libSQL `:memory:` journal, plans in memory.
 * tools/mutants/epoch.json names the mutants these tests kill.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { PlanSource } from "../../../src/ports/plan_source.ts";
import type { WakeReason } from "../../../src/ports/reconcile.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "talos-v1.14.2";
const PLAN_PATH = `plans/${PLAN}.yaml`;
const ADMIN = { identity: "test-admin", role: "recovery-admin" as const };

/** A new epoch as a restore's recovery entry mints it (no scope to release: nothing ran). */
async function newEpoch(j: Journal, nowMs: number): Promise<string> {
  const epoch = await j.enterRecoveryMode(ADMIN, "journal restored from a backup", nowMs);
  await j.exitRecoveryMode(ADMIN, nowMs);
  return epoch;
}

async function world(
  o: {
    onList?: (j: Journal) => Promise<void>;
    /** Called after the plan-level dispatch check (before the run's deps are built). */
    afterPlanCheck?: (j: Journal) => Promise<void>;
  } = {},
) {
  const twin = startInprocTwin({ description: await homeOps() });
  const raw = await openJournal({ url: ":memory:", ids: counterIds("r"), nowMs: 0 });
  const journal = new Proxy(raw, {
    get(target, p) {
      if (p === "recordDispatchCheck") {
        return async (input: Parameters<Journal["recordDispatchCheck"]>[0]) => {
          const r = await raw.recordDispatchCheck(input);
          if (input.node === null) await o.afterPlanCheck?.(raw);
          return r;
        };
      }
      const v = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as Journal;
  const memory = new MemoryPlanSource("main", () => twin.clock.now());
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (
    const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) files[f] = await Deno.readTextFile(join(ROOT, f));
  await memory.commit("main", files);
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const allowed = `${alice.allowedSignersLine}\n${bob.allowedSignersLine}\n`;
  const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
  const planText = onlyNodes("worker-1")(await Deno.readTextFile(join(ROOT, PLAN_PATH)));
  const bytes = new TextEncoder().encode(planText);
  const sig = (await alice.sign(bytes)) + (await bob.sign(bytes));
  // The watched branch's listing, with a hook before it (an admin acting while the loop runs,
  // after the cycle's own epoch check).
  const source: PlanSource = {
    fetch: () => memory.fetch(),
    listPlans: async (c) => {
      await o.onList?.(journal);
      return await memory.listPlans(c);
    },
    introductions: (c, since) => memory.introductions(c, since),
    readFile: (c, p) => memory.readFile(c, p),
  };
  const log = new MemoryLogger();
  const stopper = new AbortController();
  // One cycle, then the loop waits for its runs to end: a run that meets the new epoch ends, and
  // the process with it.
  const wakeup = { wait: (): Promise<WakeReason> => Promise.resolve("stop") };
  // The epoch this process started in: read once, as app/reconcile_wiring.ts reads it.
  const epoch = (await journal.installation()).epoch;
  const reconciler = await Reconciler.create({
    epoch,
    source,
    sink: new MemoryReportSink(),
    journal,
    executor: planExecutor({
      journal,
      epoch,
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.clock,
      timeoutClock: twin.timeoutClock,
      log,
      owner: "ctl_loop",
      callTimeoutMs: (ms) => ms,
      pollIntervalMs: 5_000,
      roundIntervalMs: 30_000,
    }, { trust, requiredApprovals: 1 }),
    renderer: reconcileReports(),
    trust,
    wakeup,
    clock: twin.clock,
    waitClock: twin.timeoutClock,
    log,
    watchedBranch: "main",
    isPlanBranch: (b) => b.startsWith("plan/"),
    reportBranch: "reports",
    requiredApprovals: 1,
    pollIntervalMs: 30_000,
    signal: stopper.signal,
  });
  return {
    twin,
    journal,
    log,
    epoch,
    reconciler,
    merge: () => memory.commit("main", { [PLAN_PATH]: planText, [`${PLAN_PATH}.sig`]: sig }),
    /** Everything cairn sent that changes the cluster, counted at the twin. */
    sent: () => ({
      talos: twin.talos.stats.totalMutating,
      kube: twin.kube.stats.mutating,
      evictions: twin.kube.stats.evictions.accepted,
    }),
    async close() {
      stopper.abort();
      twin.stop();
      await raw.close();
    },
  };
}

/** `run` ends with `EpochSuperseded` naming the epoch the process started in and the current one. */
async function stopsSuperseded(
  r: Reconciler,
  started: string,
  current: () => string | undefined,
): Promise<void> {
  await rejects(r.run(), (e: unknown) => {
    assert(e instanceof CairnError && e.reason === "EpochSuperseded", String(e));
    const now = current();
    assert(now && e.message.includes(started) && e.message.includes(now), e.message);
    return true;
  });
}

Deno.test("reconcile: a process that outlived a recovery entry binds and runs nothing and stops, naming both epochs", async () => {
  const w = await world();
  try {
    const current = await newEpoch(w.journal, 1_000);
    assert(current !== w.epoch);
    await w.merge();
    await stopsSuperseded(w.reconciler, w.epoch, () => current);
    assertEquals(await w.journal.nameBindings(), [], "nothing bound under the new epoch");
    assertEquals(await w.journal.listOperations(), []);
    assertEquals(w.sent(), { talos: 0, kube: 0, evictions: 0 });
    assertEquals(w.reconciler.readiness().ready, false);
    assert(w.log.entries.some((e) => e.msg.startsWith("journal epoch superseded")));
  } finally {
    await w.close();
  }
});

Deno.test("reconcile: a run started after the epoch moved carries the process's epoch, is refused, and the process stops", async () => {
  // The epoch moves while the cycle lists the plans, after the cycle's own check passed: the plan
  // is bound and its run starts, with the epoch the process started in.
  const moved: { epoch?: string } = {};
  const w = await world({
    onList: async (j) => {
      if (!moved.epoch && (await j.nameBindings()).length === 0) {
        moved.epoch = await newEpoch(j, 1_000);
      }
    },
  });
  try {
    await w.merge();
    await stopsSuperseded(w.reconciler, w.epoch, () => moved.epoch);
    const ends = w.reconciler.finished().map((x) => x.end.reasons.map((r) => r.reason));
    assertEquals(ends, [["EpochSuperseded"]]);
    assertEquals(await w.journal.listOperations(), [], "the commitment was refused");
    assertEquals(w.sent(), { talos: 0, kube: 0, evictions: 0 });
  } finally {
    await w.close();
  }
});

Deno.test("reconcile: the epoch moving between the plan's dispatch check and its run's start: the run acts in the process's epoch, is refused, sends nothing", async () => {
  // The plan-level check passed in the process's epoch; the epoch moves right after it, before
  // the run's deps are built. They carry the process's epoch, never one read again now.
  const moved: { epoch?: string } = {};
  const w = await world({
    afterPlanCheck: async (j) => {
      moved.epoch ??= await newEpoch(j, 1_000);
    },
  });
  try {
    await w.merge();
    await stopsSuperseded(w.reconciler, w.epoch, () => moved.epoch);
    assert(moved.epoch, "the epoch moved after the plan-level check");
    assertEquals(await w.journal.listOperations(), [], "nothing committed in the new epoch");
    assertEquals(w.sent(), { talos: 0, kube: 0, evictions: 0 });
  } finally {
    await w.close();
  }
});
