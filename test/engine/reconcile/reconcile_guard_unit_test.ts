/**
 * The reconcile loop's safety decisions, each pinned by a test that fails without it
 * (tools/mutants/reconcile_rules.json): which merged plan is bound and queued, that a digest runs
 * once, one run per cluster in merge order, what stops a run (end of term, superseded epoch,
 * SIGTERM) and that nothing starts after it, the bound evidence manifest, and the executor port's
 * hand-over of the stop signal and the approval policy to the rollout.
 *
 * The loop's tests bind through the real executor into a libSQL `:memory:` journal and script the
 * execution itself (no cluster): every `execute` is recorded and ends when the test says so or
 * its signal aborts. The executor's tests run the real rollout against the in-process twin.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { cacheEvidenceChecker } from "../../../src/app/evidence_run.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import type { Leadership } from "../../../src/engine/leadership/elector.ts";
import {
  checkBoundEvidence,
  evidenceJournalEntry,
  evidenceRefusal,
} from "../../../src/engine/reconcile/bound_evidence.ts";
import { branchFiles } from "../../../src/engine/reconcile/branch_files.ts";
import { planExecutor } from "../../../src/engine/reconcile/plan_executor.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type {
  EvidenceChecker,
  EvidenceReading,
  ExecutionEnd,
  PlanExecutor,
} from "../../../src/ports/reconcile.ts";
import { reconcileReports } from "../../../src/report/reconcile_reports.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryPlanSource, MemoryReportSink } from "../../_helpers/memory_git.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { type NativeSigner, nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "talos-v1.14.2";
const PLAN_PATH = `plans/${PLAN}.yaml`;
/** A second plan for the same cluster (worker-2); its file sorts before PLAN's. */
const SECOND = `${PLAN}-w2`;
const MANIFEST = "evidence/upgrade-order.yaml";
/** The cluster fixture's start; the example plan expires 2027-01-30. */
const START_MS = Date.parse("2026-12-01T09:00:00Z");
const ADMIN = { identity: "test-admin", role: "recovery-admin" as const };
const COMPLETED: ExecutionEnd = { state: "completed", reasons: [] };
const STOPPED: ExecutionEnd = {
  state: "stopped",
  reasons: [{ reason: "Stopped", message: "stopped between steps", where: "controller" }],
};

/** One `execute` the loop made. */
interface Run {
  readonly digest: string;
  readonly signal: AbortSignal;
  end(e?: ExecutionEnd): void;
}

/**
 * Scripted executions: each `execute` is recorded; it ends at once (completed) unless `hold` is
 * set, then when the test calls `end`, and always when its signal aborts (stopped). A digest
 * executed a second time is held and resolves `repeated`: no test lets the loop spin.
 */
class Runs {
  readonly calls: Run[] = [];
  hold = false;
  readonly #repeat = Promise.withResolvers<string>();
  readonly repeated = this.#repeat.promise;
  #waiting: { count: number; resolve: () => void }[] = [];

  /** Resolves once `count` executions were asked for. */
  started(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push({ count, resolve });
    return promise;
  }

  execute(digest: string, signal: AbortSignal): Promise<ExecutionEnd> {
    const again = this.calls.some((c) => c.digest === digest);
    const { promise, resolve } = Promise.withResolvers<ExecutionEnd>();
    this.calls.push({ digest, signal, end: (e = COMPLETED) => resolve(e) });
    for (const w of this.#waiting.filter((x) => this.calls.length >= x.count)) w.resolve();
    if (signal.aborted) resolve(STOPPED);
    signal.addEventListener("abort", () => resolve(STOPPED), { once: true });
    if (again) this.#repeat.resolve(digest);
    else if (!this.hold) resolve(COMPLETED);
    return promise;
  }
}

/** A Lease the test hands out and takes back: `end()` ends the current term. */
class Terms implements Leadership {
  #term = new AbortController();
  #leading = true;
  term() {
    return this.#leading ? this.#term.signal : undefined;
  }
  status() {
    return { role: this.#leading ? "leader" as const : "standby" as const };
  }
  release() {
    this.end();
    return Promise.resolve(true);
  }
  end() {
    this.#leading = false;
    this.#term.abort();
    this.#term = new AbortController();
  }
}

type Person = "alice" | "bob" | "carol";

interface GuardWorld {
  readonly clock: SimClock;
  readonly journal: Journal;
  readonly source: MemoryPlanSource;
  readonly sink: MemoryReportSink;
  readonly log: MemoryLogger;
  readonly runs: Runs;
  readonly terms: Terms;
  /** The executor the loop binds through (the real one; its execute is never called here). */
  readonly real: PlanExecutor;
  /** The example plan cut to worker-1, and a second plan for worker-2. */
  readonly planText: string;
  readonly secondText: string;
  /** Who the trust root lists (alice and bob; carol once `trust("carol")`). */
  trust(...who: Person[]): void;
  sign(text: string, who?: readonly Person[]): Promise<string>;
  /** Commits `plans/<name>.yaml` (signed by alice and bob unless `sig`) and `also` on main. */
  merge(
    name: string,
    text: string,
    o?: { sig?: string; also?: Record<string, string> },
  ): Promise<string>;
  reconciler(o?: { evidence?: EvidenceChecker }): Promise<Reconciler>;
  /** SIGTERM: the loop's own stop signal. */
  stop(): void;
  close(): Promise<void>;
}

async function guardWorld(): Promise<GuardWorld> {
  const clock = new SimClock(START_MS);
  const journal = await openJournal({ url: ":memory:", ids: counterIds("g"), nowMs: START_MS });
  const source = new MemoryPlanSource("main", () => clock.now());
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", MANIFEST]) {
    files[f] = await Deno.readTextFile(join(ROOT, f));
  }
  await source.commit("main", files);
  const people: Record<Person, NativeSigner> = {
    alice: await nativeSigner("alice@example.com"),
    bob: await nativeSigner("bob@example.com"),
    carol: await nativeSigner("carol@example.com"),
  };
  let listed: Person[] = ["alice", "bob"];
  const trust = {
    load: () =>
      Promise.resolve(parseAllowedSigners(
        listed.map((p) => people[p].allowedSignersLine).join("\n") + "\n",
        "allowed_signers",
      )),
  };
  const log = new MemoryLogger();
  const sink = new MemoryReportSink();
  const runs = new Runs();
  const terms = new Terms();
  const stopper = new AbortController();
  const made: Reconciler[] = [];
  const real = planExecutor({
    journal,
    // Binding never reaches the cluster, and `execute` is scripted.
    cluster: {} as never,
    clock,
    log,
    owner: "ctl_guard",
    callTimeoutMs: (ms) => ms,
    pollIntervalMs: 5_000,
    roundIntervalMs: 30_000,
  }, { trust, requiredApprovals: 1 });
  const executor: PlanExecutor = {
    bind: (input) => real.bind(input),
    execute: (digest, opts) => runs.execute(digest, opts.signal),
  };
  const example = await Deno.readTextFile(join(ROOT, PLAN_PATH));
  const sign = async (text: string, who: readonly Person[] = ["alice", "bob"]) => {
    let out = "";
    for (const p of who) out += await people[p].sign(new TextEncoder().encode(text));
    return out;
  };
  return {
    clock,
    journal,
    source,
    sink,
    log,
    runs,
    terms,
    real,
    planText: onlyNodes("worker-1")(example),
    secondText: onlyNodes("worker-2")(example).replace(`name: ${PLAN}`, `name: ${SECOND}`),
    trust: (...who) => (listed = ["alice", "bob", ...who]),
    sign,
    merge: async (name, text, o = {}) =>
      await source.commit("main", {
        [`plans/${name}.yaml`]: text,
        [`plans/${name}.yaml.sig`]: o.sig ?? await sign(text),
        ...o.also,
      }),
    reconciler: async (o = {}) => {
      const r = await Reconciler.create({
        source,
        sink,
        journal,
        executor,
        renderer: reconcileReports(),
        trust,
        wakeup: { wait: () => Promise.resolve("stop") },
        clock,
        log,
        watchedBranch: "main",
        isPlanBranch: (b) => b.startsWith("plan/"),
        reportBranch: "reports",
        requiredApprovals: 1,
        pollIntervalMs: 30_000,
        signal: stopper.signal,
        leadership: terms,
        ...(o.evidence ? { evidence: o.evidence } : {}),
      });
      made.push(r);
      return r;
    },
    stop: () => stopper.abort(),
    async close() {
      // Every run ends on the stop (held ones included) before the journal closes under them.
      stopper.abort();
      for (const r of made) await r.settled();
      await journal.close();
    },
  };
}

/** Waits for the loop's runs to end; fails at once when a digest was executed a second time. */
async function settle(w: GuardWorld, r: Reconciler): Promise<void> {
  const again = await Promise.race([r.settled().then(() => undefined), w.runs.repeated]);
  assertEquals(again, undefined, `plan ${again?.slice(0, 12)} was executed a second time`);
}

async function digestOf(text: string): Promise<string> {
  return (await parsePlan(new TextEncoder().encode(text), { file: PLAN_PATH })).sha256;
}

function refusedReasons(w: GuardWorld): unknown[] {
  return w.log.entries.filter((e) => e.msg === "merged plan refused").map((e) =>
    e.fields["reason"]
  );
}

Deno.test("reconcile guard: an expired merged plan is refused at the clock's now, never bound or run", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    await w.clock.advanceTo(Date.parse("2027-02-01T00:00:00Z"));
    const r = await w.reconciler();
    await r.cycle();
    await settle(w, r);
    assert(refusedReasons(w).length === 1, JSON.stringify(refusedReasons(w)));
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("`PlanExpired`"), preview.slice(0, 800));
    assertEquals(await w.journal.nameBindings(), [], "nothing bound");
    assertEquals(w.runs.calls.length, 0, "nothing executed");
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: a plan the journal refuses to bind (its name bound elsewhere to another digest) is never queued", async () => {
  const w = await guardWorld();
  try {
    const r = await w.reconciler();
    // After this process started, another one bound the name to other bytes (an apply, say).
    const other = w.planText.replace("retry:\n    maxAttempts: 3", "retry:\n    maxAttempts: 2");
    assert(other !== w.planText);
    const otherBytes = new TextEncoder().encode(other);
    const bound = await w.real.bind({
      parsed: await parsePlan(otherBytes, { file: PLAN_PATH }),
      bytes: otherBytes,
      signatures: await w.sign(other),
      commit: "elsewhere",
      approver: "bob@example.com",
      nowMs: w.clock.now(),
    });
    assertEquals(bound, { ok: true });
    await w.merge(PLAN, w.planText);
    await r.cycle();
    await settle(w, r);
    assertEquals(refusedReasons(w), ["PlanChangedAfterApproval"]);
    assertEquals(w.runs.calls.length, 0, "nothing executed");
    assertEquals(r.finished(), []);
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 400));
  } finally {
    await w.close();
  }
});

for (const end of ["completed", "halted", "refused"] as const) {
  Deno.test(`reconcile guard: a plan whose run ended ${end} is not run again when re-assessed (trust root edited)`, async () => {
    const w = await guardWorld();
    try {
      await w.merge(PLAN, w.planText);
      const r = await w.reconciler();
      w.runs.hold = true;
      await r.cycle();
      assertEquals(w.runs.calls.length, 1);
      w.runs.calls[0]!.end({
        state: end,
        reasons: end === "completed"
          ? []
          : [{ reason: "HealthReadFailed", message: "scripted end" }],
      });
      await settle(w, r);
      // Every merged plan is assessed again under the edited trust root and binds again (the
      // same digest): it is not queued a second time.
      w.trust("carol");
      await r.cycle();
      await settle(w, r);
      assert(w.log.entries.filter((e) => e.msg === "plan approved and queued").length === 1);
      assertEquals(w.runs.calls.length, 1, "executed once");
      assertEquals(r.finished().map((x) => x.end.state), [end]);
    } finally {
      await w.close();
    }
  });
}

Deno.test("reconcile guard: a plan queued twice in one pass (re-assessed while it runs) runs once", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    const r = await w.reconciler();
    w.runs.hold = true;
    await r.cycle();
    w.trust("carol");
    await r.cycle();
    assertEquals(w.runs.calls.length, 1);
    w.runs.calls[0]!.end();
    await settle(w, r);
    assertEquals(w.runs.calls.length, 1, "executed once");
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: plans of one cluster run one at a time, in merge order", async () => {
  const w = await guardWorld();
  try {
    // PLAN merged first, SECOND after it (SECOND's file sorts first in the listing).
    await w.merge(PLAN, w.planText);
    await w.merge(SECOND, w.secondText);
    const r = await w.reconciler();
    w.runs.hold = true;
    await r.cycle();
    assertEquals(w.runs.calls.map((c) => c.digest), [await digestOf(w.planText)]);
    // The second waits for the cluster's slot, across cycles too.
    await r.cycle();
    assertEquals(w.runs.calls.length, 1, "one run per cluster");
    w.runs.calls[0]!.end();
    // The first run's end frees the slot (settled cannot resolve while the second one runs).
    await Promise.race([w.runs.started(2), r.settled()]);
    assertEquals(w.runs.calls.map((c) => c.digest), [
      await digestOf(w.planText),
      await digestOf(w.secondText),
    ]);
    w.runs.calls[1]!.end();
    await settle(w, r);
    assertEquals(r.finished().map((x) => x.plan), [PLAN, SECOND]);
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: the end of the leader's term stops the run in flight", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    const r = await w.reconciler();
    w.runs.hold = true;
    await r.cycle();
    const run = w.runs.calls[0]!;
    assertEquals(run.signal.aborted, false);
    w.terms.end();
    assert(run.signal.aborted, "the run's signal follows the term");
    await settle(w, r);
    assertEquals(r.finished().map((x) => x.end.state), ["stopped"]);
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: a superseded epoch stops the run in flight and starts nothing queued behind it", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    await w.merge(SECOND, w.secondText);
    const r = await w.reconciler();
    w.runs.hold = true;
    await r.cycle();
    assertEquals(w.runs.calls.length, 1);
    // A recovery entry (a journal restore) mints a new epoch while the run is in flight.
    await w.journal.enterRecoveryMode(ADMIN, "journal restored from a backup", w.clock.now());
    await w.journal.exitRecoveryMode(ADMIN, w.clock.now());
    await r.cycle();
    assert(w.runs.calls[0]!.signal.aborted, "the run in flight was stopped");
    await settle(w, r);
    assertEquals(w.runs.calls.length, 1, "the queued plan did not start");
    assertEquals(r.finished().map((x) => x.end.state), ["stopped"]);
    assertEquals(r.readiness().ready, false);
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: after SIGTERM the plan queued behind the stopped run does not start", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    await w.merge(SECOND, w.secondText);
    const r = await w.reconciler();
    w.runs.hold = true;
    await r.cycle();
    assertEquals(w.runs.calls.length, 1);
    w.stop();
    assert(w.runs.calls[0]!.signal.aborted);
    await settle(w, r);
    assertEquals(w.runs.calls.length, 1, "nothing started after the stop");
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: a merged plan whose evidence manifest changed after it was written is refused unbound", async () => {
  const w = await guardWorld();
  try {
    const manifest = await Deno.readTextFile(join(ROOT, MANIFEST));
    await w.merge(PLAN, w.planText, {
      also: { [MANIFEST]: manifest + "# edited after the plan was written\n" },
    });
    // The cache is never reached: the digest differs first.
    const r = await w.reconciler({ evidence: cacheEvidenceChecker("/nonexistent/evidence") });
    await r.cycle();
    await settle(w, r);
    assertEquals(refusedReasons(w), ["EvidenceManifestDigestMismatch"]);
    assertEquals(await w.journal.getPlan(await digestOf(w.planText)), undefined, "not bound");
    assertEquals(w.runs.calls.length, 0, "nothing executed");
    const preview = w.sink.files.get(`reports/${PLAN}/preview/main.md`) ?? "";
    assert(preview.includes("`EvidenceManifestDigestMismatch`"), preview.slice(0, 800));
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: the evidence reading a merged plan was bound on is on the journal's timeline", async () => {
  const w = await guardWorld();
  try {
    await w.merge(PLAN, w.planText);
    // An empty cache: the manifest is the bound one, its sources unread.
    const r = await w.reconciler({ evidence: cacheEvidenceChecker("/nonexistent/evidence") });
    await r.cycle();
    await settle(w, r);
    const digest = await digestOf(w.planText);
    assertEquals(w.runs.calls.map((c) => c.digest), [digest]);
    const checks = (await w.journal.events()).filter((e) => e.kind === "evidence-check")
      .map((e) => JSON.parse(e.body));
    assertEquals(checks.map((b) => [b.plan, b.manifest, b.verdict]), [
      [digest, MANIFEST, "unreadable"],
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("reconcile guard: a KubernetesUpgrade's changed evidence manifest is refused like a TalosUpgrade's", async () => {
  const k8s = await Deno.readTextFile(join(ROOT, "plans/kubernetes-v1.36.0.yaml"));
  const text = k8s.replace(
    "  retry:\n",
    `  evidence:\n    path: ${MANIFEST}\n    sha256: ${"ab".repeat(32)}\n  retry:\n`,
  );
  assert(text !== k8s);
  const parsed = await parsePlan(new TextEncoder().encode(text), {
    file: "plans/kubernetes-v1.36.0.yaml",
  });
  const source = new MemoryPlanSource("main", () => START_MS);
  const commit = await source.commit("main", {
    [MANIFEST]: await Deno.readTextFile(join(ROOT, MANIFEST)),
  });
  const reading = await checkBoundEvidence(
    parsed.plan,
    commit,
    source,
    cacheEvidenceChecker("/nonexistent/evidence"),
  );
  assertEquals(evidenceRefusal(reading)?.reason, "EvidenceManifestDigestMismatch");
});

Deno.test("reconcile guard: the journal records a failing evidence check as fail, never pass", () => {
  const sha = (c: string) => c.repeat(64);
  const reading: EvidenceReading = {
    status: "checked",
    file: MANIFEST,
    outcome: {
      status: "checked",
      result: {
        manifest: { name: "upgrade-order", file: MANIFEST, sha256: sha("a") },
        mode: "offline",
        ok: false,
        // Every source was read from the cache: its bytes are not the pinned ones.
        sources: [{
          id: "talos-upgrade",
          repo: "https://github.com/siderolabs/talos",
          revision: "v1.14.2",
          path: "internal/upgrade.go",
          expectedSha256: sha("1"),
          cachedSha256: sha("2"),
          verdict: "fail",
          message: "the cached bytes differ from the pinned digest",
        }],
        assertions: [],
        controls: [],
        counts: {
          sources: { passed: 0, failed: 1 },
          assertions: { passed: 0, failed: 0 },
          controls: { passed: 0, failed: 0 },
        },
      },
    },
  };
  const entry = evidenceJournalEntry(reading, { path: MANIFEST, sha256: sha("a") });
  assertEquals(entry.verdict, "fail");
});

/** The real executor port over the twin, with `plan` bound in a fresh journal. */
async function boundOnTwin(requiredApprovals: number) {
  const twin = startInprocTwin({ description: await homeOps() });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds("x"),
    nowMs: twin.clock.now(),
  });
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const allowed = `${alice.allowedSignersLine}\n${bob.allowedSignersLine}\n`;
  const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
  const source = new MemoryPlanSource("main", () => twin.clock.now());
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", MANIFEST]) {
    files[f] = await Deno.readTextFile(join(ROOT, f));
  }
  const text = onlyNodes("worker-1")(await Deno.readTextFile(join(ROOT, PLAN_PATH)));
  const bytes = new TextEncoder().encode(text);
  const signatures = (await alice.sign(bytes)) + (await bob.sign(bytes));
  files[PLAN_PATH] = text;
  const tip = await source.commit("main", files);
  const executor = planExecutor({
    journal,
    cluster: { kube: twin.kube, talos: twin.talos },
    clock: twin.clock,
    timeoutClock: twin.timeoutClock,
    log: new MemoryLogger(),
    owner: "ctl_guard",
    callTimeoutMs: (ms) => ms,
    pollIntervalMs: 5_000,
    roundIntervalMs: 30_000,
  }, { trust, requiredApprovals });
  const parsed = await parsePlan(bytes, { file: PLAN_PATH });
  assertEquals(
    await executor.bind({
      parsed,
      bytes,
      signatures,
      commit: tip,
      approver: "bob@example.com",
      nowMs: twin.clock.now(),
    }),
    { ok: true },
  );
  return {
    execute: (signal: AbortSignal) =>
      executor.execute(parsed.sha256, {
        signal,
        onProgress: () => {},
        files: branchFiles(source, "main", () => tip),
      }),
    sent: () => twin.talos.stats.totalMutating + twin.kube.stats.mutating,
    journal,
    async close() {
      twin.stop();
      await journal.close();
    },
  };
}

Deno.test("plan executor guard: the run's stop signal reaches the rollout: a stopped run sends nothing and ends stopped", async () => {
  const t = await boundOnTwin(1);
  try {
    const end = await t.execute(AbortSignal.abort());
    assertEquals(end.state, "stopped");
    assertEquals(t.sent(), 0, "nothing sent");
    assertEquals(await t.journal.listOperations(), []);
  } finally {
    await t.close();
  }
});

Deno.test("plan executor guard: the dispatch check requires the loop's approvals (two required, one given: refused)", async () => {
  const t = await boundOnTwin(2);
  try {
    const end = await t.execute(new AbortController().signal);
    assertEquals(end.state, "refused");
    assert(end.reasons.some((r) => r.reason === "ApprovalsInsufficient"), JSON.stringify(end));
    assertEquals(t.sent(), 0, "nothing sent");
  } finally {
    await t.close();
  }
});
