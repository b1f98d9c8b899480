/**
 * A ConfigApply under the reconcile loop (in process): on a plan branch it gets a zero-write
 * preview listing the change's class; merged and signed, it executes through its own executor,
 * and its execution report says which settings were observed active, with the Talos-image rows
 * not applicable and the verdict COMPLETED only because every applicable row passed.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { livePreviewer } from "../../../src/engine/preview/live_preview.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "config-apply-ntp";
const PLAN_PATH = `plans/${PLAN}.yaml`;

Deno.test("reconciler: a ConfigApply is previewed with 0 writes on its branch, then executed once merged", async () => {
  const twin = startInprocTwin({
    description: ClusterDescriptionSchema.parse(
      parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
    ),
  });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds("c"),
    nowMs: twin.clock.now(),
  });
  const stopper = new AbortController();
  try {
    const source = new MemoryPlanSource("main", () => twin.clock.now());
    const files: Record<string, string> = {};
    for (
      const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "talos/home-ops/ntp-patch.yaml"]
    ) {
      files[f] = await Deno.readTextFile(join(ROOT, f));
    }
    await source.commit("main", files);
    const sink = new MemoryReportSink();
    const log = new MemoryLogger();
    const alice = await nativeSigner("alice@example.com");
    const bob = await nativeSigner("bob@example.com");
    const allowed = `${alice.allowedSignersLine}\n${bob.allowedSignersLine}\n`;
    const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
    const cluster = { kube: twin.kube, talos: twin.talos };
    const r = await Reconciler.create({
      source,
      sink,
      journal,
      executor: planExecutor({
        journal,
        cluster,
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
      live: livePreviewer({ cluster, clock: twin.timeoutClock, journal }),
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
    });
    const text = await Deno.readTextFile(join(ROOT, PLAN_PATH));
    const bytes = new TextEncoder().encode(text);
    const sig = (await alice.sign(bytes)) + (await bob.sign(bytes));
    // The plan branch carries the bound files too (a branch forked from main would).
    await source.commit("plan/ntp", { ...files, [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: sig });
    await r.cycle();
    await r.settled();
    const preview = sink.files.get(`reports/${PLAN}/preview/plan~ntp.md`) ?? "";
    assert(preview.includes("immediate: machine.time.servers → immediate"), preview.slice(0, 600));
    assertEquals(twin.kube.stats.mutating + twin.talos.stats.totalMutating, 0);
    await source.commit("main", { [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: sig });
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => [x.plan, x.end.state]), [[PLAN, "completed"]]);
    const execution = sink.files.get(`reports/${PLAN}/execution.md`) ?? "";
    assert(execution.includes("**Verdict: COMPLETED:"), execution.slice(0, 600));
    const row = (n: number) => execution.split("\n").find((l) => l.startsWith(`| ${n} |`)) ?? "";
    assert(row(2).includes("| not applicable |"), row(2));
    assert(row(20).includes("| pass |"), row(20));
    assert(row(21).includes("observed active: machine.time.servers"), row(21));
    // Three nodes, one apply each: nothing else was sent.
    assertEquals(twin.talos.stats.totalMutating, 3);
  } finally {
    stopper.abort();
    twin.stop();
    await journal.close();
  }
});
