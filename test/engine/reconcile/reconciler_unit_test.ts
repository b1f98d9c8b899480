/**
 * The Reconciler (engine/reconcile/reconciler.ts) in one process: plans from an in-memory
 * PlanSource signed natively (Ed25519 SSHSIG), reports into an in-memory ReportSink, a libSQL
 * `:memory:` journal, and the executor wired as `cairn reconcile` wires it (`planExecutor`)
 * against the twin's own models behind the in-process ports. The git and ssh-keygen adapters and
 * the socket twin are covered by the end-to-end reconcile test; here the loop's decisions are.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { PlanSource } from "../../../src/ports/plan_source.ts";
import type { ReportSink } from "../../../src/ports/report_sink.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { type InprocTwin, startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { type NativeSigner, nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";
import { InprocKube } from "../../../src/sim/inproc/kube.ts";
import { STARTED_REPORT_WAIT_MS } from "../../../src/engine/reconcile/execution_run.ts";

const PLAN = "talos-v1.14.2";
const PLAN_PATH = `plans/${PLAN}.yaml`;

interface LoopWorld {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly source: MemoryPlanSource;
  readonly sink: MemoryReportSink;
  readonly log: MemoryLogger;
  readonly people: Readonly<Record<"alice" | "bob" | "carol", NativeSigner>>;
  /** The example plan cut to `worker-1`. */
  readonly planText: string;
  sign(text: string, who: ReadonlyArray<"alice" | "bob" | "carol">): Promise<string>;
  /** A reconciler over this world (a second one is a controller restart), through `source`. */
  reconciler(owner?: string, source?: PlanSource, sink?: ReportSink): Promise<Reconciler>;
  installs(): number;
  close(): Promise<void>;
}

async function startLoopWorld(): Promise<LoopWorld> {
  const twin = startInprocTwin({ description: await homeOps() });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds("r"),
    nowMs: twin.clock.now(),
  });
  const source = new MemoryPlanSource("main", () => twin.clock.now());
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (
    const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) {
    files[f] = await Deno.readTextFile(join(ROOT, f));
  }
  await source.commit("main", files);
  const sink = new MemoryReportSink();
  const log = new MemoryLogger();
  const people = {
    alice: await nativeSigner("alice@example.com"),
    bob: await nativeSigner("bob@example.com"),
    carol: await nativeSigner("carol@example.com"),
  };
  const allowed = Object.values(people).map((p) => p.allowedSignersLine).join("\n") + "\n";
  const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
  const planText = onlyNodes("worker-1")(await Deno.readTextFile(join(ROOT, PLAN_PATH)));
  const stopper = new AbortController();
  return {
    twin,
    journal,
    source,
    sink,
    log,
    people,
    planText,
    async sign(text, who) {
      let out = "";
      for (const p of who) out += await people[p].sign(new TextEncoder().encode(text));
      return out;
    },
    reconciler: (owner = "ctl_loop", through: PlanSource = source, to: ReportSink = sink) =>
      Reconciler.create({
        source: through,
        sink: to,
        journal,
        executor: planExecutor({
          journal,
          cluster: { kube: twin.kube, talos: twin.talos },
          clock: twin.clock,
          timeoutClock: twin.timeoutClock,
          log,
          owner,
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
      }),
    installs: () => twin.talos.stats.mutating["LifecycleService/Upgrade"] ?? 0,
    async close() {
      stopper.abort();
      twin.stop();
      await journal.close();
    },
  };
}

/** Merges the plan (and its signatures, if any) onto main. */
async function merge(w: LoopWorld, text: string, sig?: string): Promise<string> {
  return await w.source.commit("main", {
    [PLAN_PATH]: text,
    [`${PLAN_PATH}.sig`]: sig ?? null,
  });
}

Deno.test("reconciler (in process): a merged, signed plan executes once, across cycles and a restart", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => [x.plan, x.end.state, x.outcome]), [
      [PLAN, "completed", "completed"],
    ]);
    assertEquals(w.installs(), 1);
    assertEquals(w.twin.cluster.nodes.get("worker-1")!.runningVersion, "v1.14.2");
    // The next cycle sees the same plan: nothing more runs.
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().length, 1);
    // A restarted controller binds the same digest and finds the node's operation completed.
    const again = await w.reconciler("ctl_restarted");
    await again.cycle();
    await again.settled();
    assertEquals(again.finished().map((x) => x.end.state), ["completed"]);
    assertEquals(w.installs(), 1, "no second install");
    const ops = await w.journal.listOperations();
    assertEquals(ops.map((o) => [o.machine, o.state]), [["worker-1", "completed"]]);
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): the merge-order walk and the tip's plan listing are read side by side", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    let listed!: () => void;
    const listing = new Promise<"listed">((r) => (listed = () => r("listed")));
    let walkSawListing = false;
    const source: PlanSource = {
      fetch: () => w.source.fetch(),
      readFile: (c, p) => w.source.readFile(c, p),
      listPlans: (c) => {
        listed();
        return w.source.listPlans(c);
      },
      // Answers once the listing was asked for, or after 2 s: read one after the other, the
      // listing would only be asked for after this answered.
      introductions: async (c, since) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), 2_000)));
        walkSawListing = (await Promise.race([listing, late])) === "listed";
        clearTimeout(timer);
        return await w.source.introductions(c, since);
      },
    };
    const r = await w.reconciler("ctl_loop", source);
    await r.cycle();
    await r.settled();
    assert(walkSawListing, "the listing was asked for only after the walk answered");
    assertEquals(r.finished().map((x) => x.outcome), ["completed"]);
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): a merged plan starts before plan branches are previewed and kept reports pushed", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    // Another plan branch moved in the same fetch: its preview is unrelated to the merge.
    const other = onlyNodes("worker-2")(await Deno.readTextFile(join(ROOT, PLAN_PATH)));
    const branchTip = await w.source.commit("plan/other", {
      "plans/other.yaml": other,
      "plans/other.yaml.sig": await w.sign(other, ["alice", "bob"]),
    }, "main");
    let startedFirst = false;
    const runStarted = async () => {
      const until = Date.now() + 2_000;
      while (Date.now() < until && !startedFirst) {
        startedFirst = (await w.journal.events()).some((e) => e.kind === "dispatch-check");
        if (!startedFirst) await new Promise((r) => setTimeout(r, 5));
      }
      return startedFirst;
    };
    // Reports kept from an earlier outage are pushed first, in the publish queue; the push is
    // not waited for by the merge either.
    let pendingPushedAfterStart = false;
    const sink: ReportSink = {
      publish: (docs, message) => w.sink.publish(docs, message),
      retryPending: async () => {
        pendingPushedAfterStart = await runStarted();
        return undefined;
      },
    };
    const source: PlanSource = {
      fetch: () => w.source.fetch(),
      readFile: (c, p) => w.source.readFile(c, p),
      introductions: (c, since) => w.source.introductions(c, since),
      // The branch's listing answers once the merged plan's run recorded its first dispatch
      // check, or after 2 s: started after the previews, the run could not have begun by then.
      listPlans: async (c) => {
        if (c === branchTip) await runStarted();
        return await w.source.listPlans(c);
      },
    };
    const r = await w.reconciler("ctl_loop", source, sink);
    await r.cycle();
    await r.settled();
    assert(startedFirst, "the merged plan's run waited for the branch preview");
    assert(pendingPushedAfterStart, "the merged plan's run waited for the pending reports' push");
    assertEquals(r.finished().map((x) => [x.plan, x.outcome]), [[PLAN, "completed"]]);
    // The branch was still previewed, in the same cycle.
    assert(w.sink.commits.some((c) => c.message.includes("preview other")), "branch previewed");
  } finally {
    await w.close();
  }
});

/**
 * What the journal held when each execution report was published: how many operations, and the
 * virtual time since the run's first dispatch check.
 */
function publishWitness(w: LoopWorld): {
  sink: ReportSink;
  seen: { operations: number; besides: number; sinceStartMs: number; message: string }[];
} {
  const seen: { operations: number; besides: number; sinceStartMs: number; message: string }[] = [];
  return {
    seen,
    sink: {
      publish: async (docs, message) => {
        if (docs.some((d) => d.kind === "execution")) {
          const events = await w.journal.events();
          const start = events.find((e) => e.kind === "dispatch-check");
          seen.push({
            operations: (await w.journal.listOperations()).length,
            // Holds and stalls: each is a milestone of its own.
            besides: events.filter((e) => e.kind === "rollout-event").length,
            sinceStartMs: start ? w.twin.clock.now() - start.atMs : -1,
            message,
          });
        }
        return await w.sink.publish(docs, message);
      },
    },
  };
}

Deno.test("reconciler (in process): the run's first report waits for its first commitment, so its push never competes with the reads before it", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    const witness = publishWitness(w);
    const r = await w.reconciler("ctl_loop", w.source, witness.sink);
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => x.outcome), ["completed"]);
    assert(witness.seen.length >= 2, JSON.stringify(witness.seen));
    // The first one already shows worker-1's operation: nothing was pushed before the intent.
    assertEquals(witness.seen[0]!.operations, 1, JSON.stringify(witness.seen));
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): a run whose gate holds still shows as started within the wait, before any commitment", async () => {
  const w = await startLoopWorld();
  try {
    // An operator's cordon on another node: every gate round fails, the gate holds its window.
    const operator = new InprocKube({
      store: w.twin.store,
      controllers: w.twin.controllers,
      time: w.twin.time,
      faults: w.twin.faults,
      kubernetesVersion: "v1.35.2",
      fieldManager: "kubectl-cordon",
    });
    const other = await operator.getNode("worker-2");
    assertEquals((await operator.cordon("worker-2", other!.resourceVersion)).kind, "applied");
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    const witness = publishWitness(w);
    const r = await w.reconciler("ctl_loop", w.source, witness.sink);
    await r.cycle();
    await r.settled();
    const first = witness.seen[0]!;
    assertEquals([first.operations, first.message], [0, `cairn: execution of ${PLAN}: running`]);
    // The cluster's time moves only in the gate's waits: the report went out once it passed the
    // wait, before the gate's stall (half its 1,200 s window) was news of its own, and while the
    // gate still held (a later report, then the end's "held", followed).
    assertEquals(first.besides, 0, JSON.stringify(witness.seen));
    assert(first.sinceStartMs >= STARTED_REPORT_WAIT_MS, JSON.stringify(witness.seen));
    assert(witness.seen.length >= 2, JSON.stringify(witness.seen));
    assertEquals(witness.seen.at(-1)!.message, `cairn: execution of ${PLAN}: held`);
    assertEquals(await w.journal.listOperations(), [], "nothing was committed");
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): the watched tip's listing reads ahead the bound files of a plan previewed on its branch", async () => {
  const w = await startLoopWorld();
  try {
    const sig = await w.sign(w.planText, ["alice", "bob"]);
    await w.source.commit(
      `plan/${PLAN}`,
      { [PLAN_PATH]: w.planText, [`${PLAN_PATH}.sig`]: sig },
      "main",
    );
    const listings: { commit: string; readAhead: readonly string[] }[] = [];
    const source: PlanSource = {
      fetch: () => w.source.fetch(),
      readFile: (c, p) => w.source.readFile(c, p),
      introductions: (c, since) => w.source.introductions(c, since),
      listPlans: (c, o) => {
        listings.push({ commit: c, readAhead: o?.readAhead ?? [] });
        return w.source.listPlans(c);
      },
    };
    const r = await w.reconciler("ctl_loop", source);
    await r.cycle(); // the branch is previewed: its plan's bound files are known from now on
    const merged = await merge(w, w.planText, sig);
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => x.outcome), ["completed"]);
    const atMerge = listings.find((l) => l.commit === merged)!;
    for (
      const path of [
        "catalogue/talos.yaml",
        "policies/home-ops.yaml",
        "evidence/upgrade-order.yaml",
      ]
    ) {
      assert(atMerge.readAhead.includes(path), `${path} not read ahead: ${atMerge.readAhead}`);
    }
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): a plan changed after approval is refused (PlanChangedAfterApproval) and never runs", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    assertEquals(w.installs(), 1);
    // The same name, different bytes, signed again by the same people: still refused.
    const changed = w.planText.replace("retry:\n    maxAttempts: 3", "retry:\n    maxAttempts: 2");
    assert(changed !== w.planText);
    await merge(w, changed, await w.sign(changed, ["alice", "bob"]));
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().length, 1, "nothing more executed");
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("PlanChangedAfterApproval"), preview.slice(0, 400));
    const refused = w.log.entries.filter((e) => e.msg === "merged plan refused");
    assertEquals(refused.map((e) => e.fields["reason"]), ["PlanChangedAfterApproval"]);
    assertEquals(w.installs(), 1);
    assertEquals((await w.journal.listOperations()).length, 1);
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): an unsigned or under-approved merged plan is refused, bound nowhere, executed never", async () => {
  const w = await startLoopWorld();
  try {
    await merge(w, w.planText);
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    // The author alone is not enough either: one approver besides the author is required.
    await merge(w, w.planText, await w.sign(w.planText, ["alice"]));
    await r.cycle();
    await r.settled();
    const refusals = w.log.entries.filter((e) => e.msg === "merged plan refused");
    assertEquals(refusals.map((e) => e.fields["reason"]), [
      "SignatureMissing",
      "ApprovalsInsufficient",
    ]);
    assertEquals(r.finished().length, 0);
    assertEquals(await w.journal.getPlan(refusals[0]!.fields["planDigest"] as string), undefined);
    assertEquals((await w.journal.listOperations()).length, 0);
    assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0);
    // Each refusal was committed as a report naming its reason (the second superseding the first).
    const refusedReports = w.sink.commits.filter((c) => c.message.startsWith("cairn: refuse"))
      .map((c) => c.documents[0]!.markdown);
    assertEquals(refusedReports.length, 2);
    assert(refusedReports[0]!.includes("`SignatureMissing`"), refusedReports[0]!.slice(0, 600));
    assert(refusedReports[1]!.includes("`ApprovalsInsufficient`"));
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 400));
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): the execution report is published at milestones, not at every round", async () => {
  const w = await startLoopWorld();
  try {
    const two = onlyNodes("worker-1", "worker-2")(await Deno.readTextFile(join(ROOT, PLAN_PATH)));
    await merge(w, two, await w.sign(two, ["alice", "carol"]));
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => x.outcome), ["completed"]);
    const executions = w.sink.commits.filter((c) =>
      c.documents.some((d) => d.kind === "execution")
    );
    // One commit when the run starts, at most one as each node's operation settles (progress
    // checks coalesce: the last node's may fold into the end), one at the end; the health rounds
    // and in-flight moves between them publish nothing.
    const outcomes = executions.map((c) => c.message.replace(`cairn: execution of ${PLAN}: `, ""));
    assertEquals(outcomes[0], "running");
    assertEquals(outcomes[outcomes.length - 1], "completed");
    assert(outcomes.slice(1, -1).every((o) => o === "running"), outcomes.join(","));
    assert(outcomes.length >= 3 && outcomes.length <= 4, outcomes.join(","));
    const rounds = (await w.journal.exportAll())["health_rounds"]?.length ?? 0;
    assert(rounds > executions.length, `${rounds} rounds, ${executions.length} commits`);
    const bodies = executions.map((c) => c.documents[0]!.markdown);
    assertEquals(new Set(bodies).size, bodies.length, "every commit changed the report");
    const report = w.sink.files.get(`reports/${PLAN}/execution.md`)!;
    assert(report.includes("worker-1") && report.includes("worker-2"), report.slice(0, 400));
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): a merged plan signed for prod-eu whose bound health-policy digest matches no file is refused before any mutation", async () => {
  const w = await startLoopWorld();
  try {
    const attack = w.planText.replace("cluster: home-ops", "cluster: prod-eu").replace(
      /(healthPolicy:\n {4}path: .*\n {4}sha256: )[0-9a-f]{64}/,
      `$1${"ab".repeat(32)}`,
    );
    assert(attack.includes("cluster: prod-eu") && attack.includes("ab".repeat(32)));
    await merge(w, attack, await w.sign(attack, ["alice", "bob"]));
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0, "no mutation");
    assertEquals(await w.journal.listOperations(), [], "nothing committed");
    assertEquals(r.finished().map((x) => x.end.state), ["refused"]);
    const reasons = r.finished()[0]!.end.reasons.map((x) => x.reason);
    assertEquals(reasons, ["HealthPolicyDigestMismatch"]);
    const report = w.sink.files.get(`reports/${PLAN}/execution.md`) ?? "";
    assert(report.includes("**Verdict: REFUSED"), report.slice(0, 600));
    for (const why of ["HealthPolicyDigestMismatch", "ClusterIdentityMismatch", "prod-eu"]) {
      assert(report.includes(why), `the report says ${why}`);
    }
    const checks = (await w.journal.events()).filter((e) => e.kind === "dispatch-check");
    assertEquals(checks.map((e) => JSON.parse(e.body).verdict), ["refused"]);
    assert((await w.journal.verifyChain()).ok);
  } finally {
    await w.close();
  }
});

Deno.test("reconciler (in process): a plan file refused unread (too large) still gets a report saying why, once", async () => {
  const w = await startLoopWorld();
  try {
    w.source.maxPlanBytes = 100;
    await merge(w, w.planText, await w.sign(w.planText, ["alice", "bob"]));
    const r = await w.reconciler();
    await r.cycle();
    await r.settled();
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 600));
    assert(preview.includes("`PlanTooLarge`"), preview.slice(0, 1200));
    assertEquals(r.finished().length, 0, "nothing executed");
    assertEquals(w.installs(), 0);
    const refused = w.log.entries.filter((e) => e.msg === "plan file refused");
    assertEquals(refused.map((e) => e.fields["reason"]), ["PlanTooLarge"]);
    // The next cycle finds the same refusal: no second commit.
    const commits = w.sink.commits.length;
    await w.source.commit("main", { "README.md": "# plans, edited\n" });
    await r.cycle();
    await r.settled();
    assertEquals(w.sink.commits.length, commits);
  } finally {
    await w.close();
  }
});
