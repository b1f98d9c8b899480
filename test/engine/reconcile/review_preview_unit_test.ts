/**
 * The reconciler reviews the branch of a ComponentUpgrade plan against the playbooks: the
 * preview carries the review, and every blocking finding refuses the plan with its file and line.
 * In memory (PlanSource, ReportSink, journal); the review runs on the source's own commits.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { previewReportPath } from "../../../src/adapters/git/plan_paths.ts";
import { loadPlaybooks } from "../../../src/app/playbooks.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import { branchReviewer } from "../../../src/engine/review/review_branch.ts";
import type { BranchReviewer } from "../../../src/ports/gitops_tree.ts";
import type { PlanExecutor } from "../../../src/ports/reconcile.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import {
  initialState,
  movePinsOnly,
  renderBundledVersions,
  renderRepo,
  renovateBump,
} from "../../../src/sim/gitops/mod.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const NOW = Date.parse("2026-11-25T00:00:00Z");
const PLAN = "cilium-1.18.2";

/** Nothing here is merged: the executor is never reached. */
const NO_EXECUTOR: PlanExecutor = new Proxy({} as PlanExecutor, {
  get: () => () => Promise.reject(new Error("the executor is not part of a branch preview")),
});

async function previewOf(
  branchFiles: (base: Record<string, string>) => Record<string, string>,
  reviewer?: BranchReviewer,
) {
  const source = new MemoryPlanSource("main", () => NOW);
  const state = initialState({ seed: 21 });
  const main: Record<string, string> = {
    ...renderRepo(state),
    "catalogue/bundled-versions.yaml": renderBundledVersions(),
    "policies/home-ops.yaml": await Deno.readTextFile(join(ROOT, "policies/home-ops.yaml")),
  };
  await source.commit("main", main);
  const plan = await Deno.readTextFile(join(ROOT, `plans/${PLAN}.yaml`));
  await source.commit(
    "plan/cilium",
    { ...branchFiles(main), [`plans/${PLAN}.yaml`]: plan },
    "main",
  );
  const journal = await openJournal({ url: ":memory:", ids: counterIds("r"), nowMs: NOW });
  const sink = new MemoryReportSink();
  const trust = { load: () => Promise.resolve(parseAllowedSigners("", "allowed_signers")) };
  const stopper = new AbortController();
  try {
    const r = await Reconciler.create({
      source,
      sink,
      journal,
      executor: NO_EXECUTOR,
      renderer: reconcileReports(),
      trust,
      wakeup: { wait: () => Promise.resolve("stop") },
      clock: { now: () => NOW, sleep: () => Promise.resolve() },
      log: new MemoryLogger(),
      reviewer: reviewer ?? branchReviewer(source.gitOpsTree(), await loadPlaybooks()),
      watchedBranch: "main",
      isPlanBranch: (b) => b.startsWith("plan/"),
      reportBranch: "reports",
      requiredApprovals: 1,
      pollIntervalMs: 30_000,
      signal: stopper.signal,
    });
    await r.cycle();
    await r.settled();
    return sink.files.get(previewReportPath(PLAN, "plan/cilium")!) ?? "";
  } finally {
    stopper.abort();
    await journal.close();
  }
}

Deno.test("a ComponentUpgrade plan's branch bumping cleanly: the preview carries a CLEAN review", async () => {
  const state = initialState({ seed: 21 });
  const preview = await previewOf(() =>
    renderRepo(renovateBump(state, "cilium/chart", "patch").state)
  );
  assert(preview.startsWith("# Preview report: cilium-1.18.2"), preview.slice(0, 200));
  assert(preview.includes("## Review: plan/cilium against main"), preview);
  assert(preview.includes("**Verdict: CLEAN: 1 protected component touched (1 moved)"), preview);
  assert(!preview.includes("PinSetPartial"));
});

Deno.test("a ComponentUpgrade plan's branch moving 3 of 5 Talos pins is refused with PinSetPartial at its line", async () => {
  const state = initialState({ seed: 21 });
  const partial = movePinsOnly(
    state,
    "talos/talos",
    ["talconfig", "talenv", "talosupgrade"],
    "patch",
  );
  const preview = await previewOf(() => renderRepo(partial.state));
  assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 600));
  const refusal = preview.split("\n").find((l) =>
    l.includes("PinSetPartial") && l.includes("talos/talconfig.yaml")
  );
  assert(refusal, preview);
  assert(
    preview.includes("### Needs attention"),
    "the review section follows, one heading level down",
  );
  assertEquals(preview.match(/^# /gm)?.length, 1);
});

Deno.test("a review that cannot run refuses the ComponentUpgrade plan instead of passing it", async () => {
  const state = initialState({ seed: 21 });
  const broken: BranchReviewer = {
    review: () =>
      Promise.reject(Object.assign(new Error("git cat-file died"), { reason: "GitCommandFailed" })),
  };
  const preview = await previewOf(
    () => renderRepo(renovateBump(state, "cilium/chart", "patch").state),
    broken,
  );
  assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 600));
  assert(
    preview.includes(
      "`GitCommandFailed`: the review of plan/cilium against the playbooks could not run: git cat-file died",
    ),
    preview.slice(0, 2500),
  );
});
