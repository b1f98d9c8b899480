/**
 * A KubernetesUpgrade under the reconcile loop (in process): on a plan branch it gets a
 * zero-write preview (the loop's journal read for partial OS rollouts, so row 23 is judged);
 * merged and signed, it executes through its own executor and its execution report evaluates
 * rows 23–26 and says COMPLETED.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { livePreviewer } from "../../../src/engine/preview/live_preview.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { k8sTwin } from "../../_helpers/k8s_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "kubernetes-v1.36.0-talos-v1.13.9";
const PLAN_PATH = `plans/${PLAN}.yaml`;

Deno.test("reconciler: a KubernetesUpgrade is previewed with 0 writes on its branch, then executed once merged", async () => {
  const twin = await k8sTwin();
  // A journal file, as a controller has it: the loop's report reads run beside the executor's
  // writes, which a single-connection `:memory:` database cannot serve.
  const dir = await Deno.makeTempDir({ prefix: "cairn-k8s-loop-" });
  const journal = await openJournal({
    url: `file:${dir}/journal.db`,
    ids: counterIds("k"),
    nowMs: twin.clock.now(),
  });
  const stopper = new AbortController();
  try {
    const source = new MemoryPlanSource("main", () => twin.clock.now());
    const files: Record<string, string> = {};
    for (const f of ["catalogue/talos.yaml", "policies/home-ops-kubernetes.yaml"]) {
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
    await source.commit("plan/k8s", { [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: sig }, "main");
    await r.cycle();
    await r.settled();
    const preview = sink.files.get(`reports/${PLAN}/preview/plan~k8s.md`) ?? "";
    assert(preview.length > 0, [...sink.files.keys()].join(", "));
    assert(preview.includes("**Verdict: READY FOR APPROVAL"), preview.slice(0, 600));
    for (const n of [23, 24, 25, 26]) {
      const row = preview.split("\n").find((l) => l.startsWith(`| ${n} |`)) ?? "";
      assert(row.includes("| pass |"), row);
    }
    assertEquals(twin.kube.stats.mutating + twin.talos.stats.totalMutating, 0);
    await source.commit("main", { [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: sig });
    await r.cycle();
    await r.settled();
    assertEquals(
      r.finished().map((x) => [x.plan, x.end.state]),
      [[PLAN, "completed"]],
      JSON.stringify(r.finished().map((x) => x.end.reasons)),
    );
    const execution = sink.files.get(`reports/${PLAN}/execution.md`) ?? "";
    assert(execution.includes("**Verdict: COMPLETED:"), execution.slice(0, 400));
    for (const n of [23, 24, 25, 26]) {
      const row = execution.split("\n").find((l) => l.startsWith(`| ${n} |`)) ?? "";
      assert(row.includes("| pass |"), row);
    }
    // 16 pre-pulls and 19 configuration changes (kube-proxy's on each control plane), and one
    // Kubernetes write: kube-proxy's DaemonSet image.
    assertEquals(twin.talos.stats.totalMutating, 35);
    assertEquals(twin.kube.stats.mutating, 1);
  } finally {
    stopper.abort();
    twin.stop();
    await journal.close();
    await Deno.remove(dir, { recursive: true });
  }
});
