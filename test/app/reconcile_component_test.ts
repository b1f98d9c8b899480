/**
 * The reconcile loop runs a merged, signed ComponentUpgrade like any other kind: real git (a bare
 * repository the loop fetches, a work tree where Renovate's bump branch is reviewed, planned,
 * signed and merged with a merge commit), the loop wired as `cairn reconcile` wires it
 * (`createReconciler`), the in-process twin as the cluster with its Flux delivering the merge.
 * The plan is bound and journaled, the delivery is observed and tied to the merge commit, the
 * execution report lands on the report branch; a restart reports the journaled end instead of
 * observing again. A Kustomization Ready at a revision without the merge is NOT DELIVERED.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { createReconciler, HookWakeup } from "../../src/app/reconcile_wiring.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import type { Reconciler } from "../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../src/ports/journal.ts";
import { type InprocTwin, startInprocTwin } from "../../src/sim/inproc/cluster.ts";
import { createBareRepo, git, GitWorkTree } from "../_helpers/git_daemon.ts";
import { homeOps } from "../_helpers/inproc_world.ts";
import { counterIds } from "../_helpers/journal_world.ts";
import { MemoryLogger } from "../_helpers/memory_logger.ts";
import { nativeSigner } from "../_helpers/native_ssh_signer.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const POLICY = "policies/home-ops.yaml";
const PIN = "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml";
const pinText = (tag: string) =>
  [
    "apiVersion: source.toolkit.fluxcd.io/v1",
    "kind: OCIRepository",
    "metadata: {name: rook-ceph, namespace: rook-ceph}",
    `spec: {interval: 1h, url: oci://ghcr.io/rook/rook-ceph, ref: {tag: ${tag}}}`,
    "",
  ].join("\n");
const PLAN = "rook-ceph-v1.21.0";
const PLAN_PATH = `plans/${PLAN}.yaml`;
const REPORT = `reports/${PLAN}/execution.md`;
const BRANCH = "renovate/rook-ceph-1.x";

function planText(d: { policySha: string; base: string; head: string; pinSha: string }): string {
  return [
    "apiVersion: cairn.dev/v1alpha1",
    "kind: ComponentUpgrade",
    "metadata:",
    `  name: ${PLAN}`,
    "  cluster: home-ops",
    "  author: alice@example.com",
    "  expires: 2026-12-20T00:00:00Z",
    "spec:",
    `  healthPolicy: {path: ${POLICY}, sha256: ${d.policySha}}`,
    "  retry: {maxAttempts: 3}",
    "  component: rook-ceph",
    "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
    "  from: v1.20.2",
    "  to: v1.21.0",
    "  change:",
    `    base: "${d.base}"`,
    `    head: "${d.head}"`,
    `    pins: [{path: ${PIN}, sha256: ${d.pinSha}}]`,
    "  delivery:",
    "    source: {kind: OCIRepository, namespace: rook-ceph, name: rook-ceph}",
    "    images:",
    "      - {namespace: rook-ceph, selector: app.kubernetes.io/part-of=ceph-csi, " +
    "container: csi-rbdplugin, image: quay.io/cephcsi/cephcsi:v3.18.1, renderedBy: the operator}",
    "  phases: {deadlines: {rollout: {transportSeconds: 60, verificationSeconds: 600}}}",
    "",
  ].join("\n");
}

interface World {
  readonly dir: string;
  readonly bare: string;
  readonly base: string;
  readonly merge: string;
  readonly twin: InprocTwin;
  readonly journal: Journal;
  reconciler(signal: AbortSignal): Promise<Reconciler>;
  report(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** main at the bump's base; the bump, its plan and signatures on a branch merged with --no-ff. */
async function world(): Promise<World> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-reconcile-component-" });
  const bare = await createBareRepo(dir, "home-ops.git");
  const wt = await GitWorkTree.clone(bare, join(dir, "work"), {
    name: "Alice",
    email: "alice@example.com",
  });
  await wt.checkout("main", true);
  const policy = await Deno.readTextFile(join(ROOT, POLICY));
  const base = await wt.commit(
    { "README.md": "# home-ops\n", [POLICY]: policy, [PIN]: pinText("v1.20.2") },
    "Initial",
  );
  await wt.push("main");
  await wt.checkout(BRANCH, true);
  const head = await wt.commit({ [PIN]: pinText("v1.21.0") }, "Update rook-ceph to v1.21.0");
  const enc = new TextEncoder();
  const text = planText({
    policySha: await sha256Hex(enc.encode(policy)),
    base,
    head,
    pinSha: await sha256Hex(enc.encode(pinText("v1.21.0"))),
  });
  const people = [await nativeSigner("alice@example.com"), await nativeSigner("bob@example.com")];
  let sig = "";
  for (const p of people) sig += await p.sign(enc.encode(text));
  await wt.commit({ [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: sig }, `Plan ${PLAN}`);
  await wt.checkout("main");
  const merge = await wt.merge(BRANCH);
  await wt.push("main");
  const trustPath = join(dir, "allowed_signers");
  await Deno.writeTextFile(trustPath, people.map((p) => p.allowedSignersLine).join("\n") + "\n");

  const twin = startInprocTwin({ description: await homeOps() });
  const journal = await openJournal({
    url: `file:${join(dir, "journal.db")}`,
    ids: counterIds("c"),
    nowMs: twin.clock.now(),
  });
  return {
    dir,
    bare,
    base,
    merge,
    twin,
    journal,
    reconciler: (signal) =>
      createReconciler({
        git: {
          remote: bare,
          cacheDir: join(dir, "state", "repo-cache"),
          branch: "main",
          reportBranch: "cairn-reports",
          reportAuthor: { name: "cairn", email: "cairn@localhost" },
        },
        executor: {
          journal,
          cluster: { kube: twin.kube, talos: twin.talos },
          clock: twin.clock,
          timeoutClock: twin.timeoutClock,
          log: new MemoryLogger(),
          owner: "ctl_loop",
          callTimeoutMs: (ms) => ms,
          pollIntervalMs: 10_000,
          roundIntervalMs: 30_000,
        },
        allowedSignersPath: trustPath,
        requiredApprovals: 1,
        pollIntervalMs: 30_000,
        planBranchesGlob: "plan/*",
        signal,
        wakeup: new HookWakeup(signal),
      }),
    report: async () => {
      try {
        return await git(["--git-dir", bare, "show", `cairn-reports:${REPORT}`]);
      } catch {
        return undefined;
      }
    },
    async close() {
      twin.stop();
      await journal.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const verdictOf = (report: string | undefined) =>
  report?.split("\n").find((l) => l.startsWith("**Verdict:")) ?? "";

Deno.test("the reconcile loop binds, journals and observes a merged ComponentUpgrade; a restart reports, never re-observes", async () => {
  const w = await world();
  const stop = new AbortController();
  try {
    // Flux delivers the merge commit: both Rook charts to v1.21.0, the plugins re-rendered.
    w.twin.gitops.merge({
      commit: w.merge,
      ociTags: { "rook-ceph/rook-ceph": "v1.21.0", "rook-ceph/rook-ceph-cluster": "v1.21.0" },
    });
    const r = await w.reconciler(stop.signal);
    await r.cycle();
    await r.settled();
    assertEquals(r.finished().map((x) => [x.plan, x.end.state, x.outcome]), [
      [PLAN, "completed", "completed"],
    ]);
    const report = await w.report();
    assert(verdictOf(report).startsWith("**Verdict: COMPLETED:"), verdictOf(report));
    assert(report!.includes(`applied main&#64;sha1:${w.merge}, which contains the merge`), report);
    assert(report!.includes("| `csi-plugin-images` | pass |"), report);
    // Bound and journaled: the plan, its dispatch check, the after-merge rounds, the end.
    const digest = (await w.journal.nameBindings()).find((b) => b.name === PLAN)!.digest;
    const h = (await w.journal.planHistory(digest))!;
    assertEquals(h.plan.firstSeenCommit, w.merge);
    assert(h.dispatchChecks.length >= 1);
    const rounds = h.healthRounds.length;
    assert(rounds >= 1);
    assertEquals(h.rolloutEvents?.filter((e) => e.kind === "component-end").length, 1);
    assert((await w.journal.verifyChain()).ok);
    assertEquals(w.twin.kube.stats.mutating, 0, "cairn changed nothing in the cluster");

    // A restart: the plan is bound again, and its journaled end reported, not observed again
    // (and the report is the same document from the start: no RUNNING flap, no new commit).
    const reportCommits = () => git(["--git-dir", w.bare, "rev-list", "--count", "cairn-reports"]);
    const commits = await reportCommits();
    const again = await w.reconciler(stop.signal);
    await again.cycle();
    await again.settled();
    assertEquals(again.finished().map((x) => [x.plan, x.outcome]), [[PLAN, "completed"]]);
    const h2 = (await w.journal.planHistory(digest))!;
    assertEquals(h2.healthRounds.length, rounds, "no round ran again");
    assertEquals(await w.report(), report);
    assertEquals(await reportCommits(), commits, "the same report is not committed again");
  } finally {
    stop.abort();
    await w.close();
  }
});

Deno.test("under the loop, a Kustomization Ready at a revision without the merge is NOT DELIVERED", async () => {
  const w = await world();
  const stop = new AbortController();
  try {
    // Flux applies main's previous tip (the bump's base): Ready, current generation, no merge.
    w.twin.gitops.merge({
      commit: w.base,
      ociTags: { "rook-ceph/rook-ceph": "v1.21.0", "rook-ceph/rook-ceph-cluster": "v1.21.0" },
    });
    const r = await w.reconciler(stop.signal);
    await r.cycle();
    await r.settled();
    const [end] = r.finished();
    assertEquals([end?.end.state, end?.outcome], ["halted", "not-delivered"]);
    assertEquals(end?.end.reasons[0]?.reason, "ComponentNotDelivered");
    const report = await w.report();
    assert(verdictOf(report).startsWith("**Verdict: NOT DELIVERED"), verdictOf(report));
    assert(
      report!.includes(`main&#64;sha1:${w.base}, an older revision without the merge`),
      report,
    );
  } finally {
    stop.abort();
    await w.close();
  }
});
