/**
 * A ComponentUpgrade on the in-process twin (playbooks/rook-ceph.yaml): Flux delivers a Rook operator
 * chart bump v1.20.2 → v1.21.0 whose bundled ceph-csi-operator moves cephcsi v3.17.1 → v3.18.1.
 * When the operator does not re-render its CSI Driver CRs the plugins keep the old image however
 * long cairn waits: NOT LANDED, exit 1, the running image named. When it does, the run completes
 * and the report lists every after-merge check of the playbook.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { counterIdSource } from "../../../src/app/inproc_rollout.ts";
import { componentExitCode, runComponentPlan } from "../../../src/app/component_run.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { CommitHistory } from "../../../src/ports/commit_history.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const POLICY = "policies/home-ops.yaml";
const PIN = "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml";
const PIN_TEXT = [
  "apiVersion: source.toolkit.fluxcd.io/v1",
  "kind: OCIRepository",
  "metadata: {name: rook-ceph, namespace: rook-ceph}",
  "spec: {interval: 1h, url: oci://ghcr.io/rook/rook-ceph, ref: {tag: v1.21.0}}",
  "",
].join("\n");
const BASE = "ab".repeat(20);
const HEAD = "cd".repeat(20);
const MERGE = "ef".repeat(20);

function planText(policySha: string, pinSha: string): string {
  return [
    "apiVersion: cairn.dev/v1alpha1",
    "kind: ComponentUpgrade",
    "metadata:",
    "  name: rook-ceph-v1.21.0",
    "  cluster: home-ops",
    "  author: alice@example.com",
    "  expires: 2026-12-20T00:00:00Z",
    "spec:",
    "  healthPolicy:",
    `    path: ${POLICY}`,
    `    sha256: ${policySha}`,
    "  retry:",
    "    maxAttempts: 3",
    "  component: rook-ceph",
    "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
    "  from: v1.20.2",
    "  to: v1.21.0",
    "  change:",
    `    base: ${BASE}`,
    `    head: ${HEAD}`,
    `    pins: [{path: ${PIN}, sha256: ${pinSha}}]`,
    "  delivery:",
    "    source: {kind: OCIRepository, namespace: rook-ceph, name: rook-ceph}",
    "    images:",
    "      - namespace: rook-ceph",
    "        selector: app.kubernetes.io/part-of=ceph-csi",
    "        container: csi-rbdplugin",
    "        image: quay.io/cephcsi/cephcsi:v3.18.1",
    "        renderedBy: the rook-ceph operator (bundled ceph-csi-operator defaults)",
    "  phases:",
    "    deadlines:",
    "      rollout: { transportSeconds: 60, verificationSeconds: 1200 }",
    "",
  ].join("\n");
}

async function run(
  rerenders: boolean,
  pinBytes = new TextEncoder().encode(PIN_TEXT),
  prepare: (twin: ReturnType<typeof startInprocTwin>) => void = () => {},
  flux: { applies?: string; history?: CommitHistory } = {},
) {
  const twin = startInprocTwin({
    description: await homeOps(),
    gitops: { rookRerendersOnRestart: rerenders },
  });
  prepare(twin);
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIdSource(),
    nowMs: twin.clock.now(),
  });
  const policy = await Deno.readFile(join(ROOT, POLICY));
  const text = planText(
    await sha256Hex(policy),
    await sha256Hex(new TextEncoder().encode(PIN_TEXT)),
  );
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: "plans/rook-ceph-v1.21.0.yaml" });
  const repo = new Map([[POLICY, policy], [PIN, pinBytes]]);
  const files: BoundFileSource = {
    describe: () => "test repository",
    read: (p) =>
      Promise.resolve(
        repo.has(p)
          ? { status: "read", bytes: repo.get(p)! }
          : { status: "missing", detail: `${p} does not exist` },
      ),
  };
  // The merge Flux will deliver: both Rook charts to v1.21.0.
  twin.gitops.merge({
    commit: flux.applies ?? MERGE,
    ociTags: { "rook-ceph/rook-ceph": "v1.21.0", "rook-ceph/rook-ceph-cluster": "v1.21.0" },
  });
  try {
    const r = await runComponentPlan({
      journal,
      cluster: { kube: twin.kube, talos: twin.talos },
      parsed,
      bytes,
      signatures: "",
      requiredApprovals: 1,
      files,
      owner: "ctl_test",
      approver: "bob@example.com",
      firstSeenCommit: MERGE,
      merged: { commit: MERGE, ...(flux.history ? { history: flux.history } : {}) },
      root: ROOT,
      clock: twin.clock,
      timeoutClock: twin.timeoutClock,
      callTimeoutMs: (ms) => ms,
      pollIntervalMs: 10_000,
      roundIntervalMs: 30_000,
    });
    return { ...r, journal, twin };
  } finally {
    twin.stop();
  }
}

const verdictOf = (report: string) =>
  report.split("\n").find((l) => l.startsWith("**Verdict:")) ?? "";

Deno.test("an operator that does not re-render: Flux delivered, plugins on the old cephcsi → NOT LANDED, exit 1", async () => {
  const r = await run(false);
  try {
    assertEquals(r.outcome.end, "not-landed");
    assertEquals(componentExitCode(r.outcome.end), 1);
    const verdict = verdictOf(r.report);
    assert(verdict.startsWith("**Verdict: NOT LANDED"), verdict);
    assert(verdict.includes("quay.io/cephcsi/cephcsi:v3.17.1"), verdict);
    const checks = Object.fromEntries(r.outcome.delivery!.checks.map((c) => [c.id, c.verdict]));
    // Flux did its part: the source and the release are at the target.
    assertEquals(checks, {
      source: "pass",
      release: "pass",
      applied: "pass",
      "images:0": "pending",
    });
    // It waited the whole verification deadline for a re-render that never came.
    assert(r.outcome.delivery!.endedAtMs - r.outcome.delivery!.startedAtMs >= 1_190_000);
    assertEquals(
      r.outcome.rounds.length,
      0,
      "no after-merge round counts for a bump that did not land",
    );
    assert(r.report.includes("| `csi-plugin-images` | fail |"), r.report);
    assertEquals(r.twin.kube.stats.mutating, 0, "cairn changed nothing in the cluster");
  } finally {
    await r.journal.close();
  }
});

Deno.test("the same bump with the operator re-rendering completes, every after-merge check in the report", async () => {
  const r = await run(true);
  try {
    assertEquals(r.outcome.end, "completed");
    assertEquals(componentExitCode(r.outcome.end), 0);
    const verdict = verdictOf(r.report);
    assert(verdict.startsWith("**Verdict: COMPLETED:"), verdict);
    for (const c of r.playbook!.spec.afterMerge) {
      assert(r.report.includes(`| \`${c.id}\` |`), `after-merge check ${c.id} missing`);
    }
    assert(r.report.includes("| `csi-plugin-images` | pass |"), r.report);
    assert(r.report.includes("| `ceph-health` | pass |"), r.report);
    assert(r.report.includes("| `operator-delivered` | pass |"), r.report);
    assert(r.report.includes("| `pvc-binds` | manual |"), r.report);
    assert(r.report.includes("## Breaking patterns checked"));
    assert(
      r.report.includes("plugins-not-rerendered") ||
        r.report.includes("after merge: csi-plugin-images pass"),
    );
    assert(r.report.includes("## Rollback caveats"));
    assert(r.report.includes("**re-pin-not-revert**"));
    // The after-merge round passed on reads made after the delivery landed, and is journaled.
    const landed = r.outcome.delivery!.landedAtMs!;
    const last = r.outcome.rounds.at(-1)!.outcome;
    assert(last.window.startedAtMs >= landed);
    assertEquals(last.verdict, "pass");
    assertEquals(r.twin.kube.stats.mutating, 0, "cairn changed nothing in the cluster");
  } finally {
    await r.journal.close();
  }
});

Deno.test("a pin file that is not the reviewed bytes refuses the plan before anything is observed", async () => {
  const r = await run(true, new TextEncoder().encode(PIN_TEXT.replace("v1.21.0", "v1.21.1")));
  try {
    assertEquals(r.outcome.end, "refused");
    assertEquals(r.outcome.refusal?.reason, "ComponentPinDigestMismatch");
    assertEquals(r.outcome.delivery, undefined);
    assert(verdictOf(r.report).startsWith("**Verdict: REFUSED: ComponentPinDigestMismatch"));
  } finally {
    await r.journal.close();
  }
});

Deno.test("landed but a NATS server lagging in every after-merge round: AFTER-MERGE CHECKS FAILED, not completed", async () => {
  const r = await run(true, undefined, (twin) =>
    twin.controllers.routes.set(
      { namespace: "messaging", kind: "pod", name: "nats-0", port: "8222", path: "/healthz" },
      { status: 503, body: '{"status":"unavailable","error":"JetStream is not current"}' },
    ));
  try {
    assertEquals(r.outcome.end, "health-failed");
    assertEquals(componentExitCode(r.outcome.end), 1);
    assert(r.outcome.rounds.length > 1, "rounds are retried until the deadline");
    assert(r.outcome.rounds.every((x) => x.outcome.verdict === "fail"));
    assert(
      verdictOf(r.report).startsWith("**Verdict: AFTER-MERGE CHECKS FAILED"),
      verdictOf(r.report),
    );
  } finally {
    await r.journal.close();
  }
});

/** What git would answer: `later` contains the merge, `older` does not. */
const OLDER = "0a".repeat(20);
const LATER = "1b".repeat(20);
const history: CommitHistory = {
  contains: (d, a) => Promise.resolve(a === MERGE ? d === LATER || d === MERGE : undefined),
};

Deno.test("a Kustomization Ready at a revision without the merge never counts: NOT DELIVERED, naming it", async () => {
  // Flux delivered the charts, but from a commit that does not contain the merge the plan was
  // approved for (the Kustomization is Ready, at its generation, at an older revision).
  const r = await run(true, undefined, undefined, { applies: OLDER, history });
  try {
    assertEquals(r.outcome.end, "not-delivered");
    assertEquals(componentExitCode(r.outcome.end), 1);
    const applied = r.outcome.delivery!.checks.find((c) => c.id === "applied")!;
    assertEquals(applied.verdict, "pending");
    assert(
      applied.detail.includes(`Kustomization flux-system/rook-ceph applied main@sha1:${OLDER}`),
    );
    assert(applied.detail.includes("an older revision without the merge"), applied.detail);
    assert(verdictOf(r.report).startsWith("**Verdict: NOT DELIVERED"), verdictOf(r.report));
    assertEquals(r.outcome.rounds.length, 0, "no after-merge round counts before the merge");
  } finally {
    await r.journal.close();
  }
});

Deno.test("a later commit that contains the merge is a delivery of it; one git does not know is not", async () => {
  const later = await run(true, undefined, undefined, { applies: LATER, history });
  try {
    assertEquals(later.outcome.end, "completed");
    const applied = later.outcome.delivery!.checks.find((c) => c.id === "applied")!;
    assert(applied.detail.includes("which contains the merge"), applied.detail);
  } finally {
    await later.journal.close();
  }
  // No history to ask: only the merge itself would do.
  const unknown = await run(true, undefined, undefined, { applies: LATER });
  try {
    assertEquals(unknown.outcome.end, "not-delivered");
    const applied = unknown.outcome.delivery!.checks.find((c) => c.id === "applied")!;
    assert(applied.detail.includes("not known to contain the merge"), applied.detail);
  } finally {
    await unknown.journal.close();
  }
});

Deno.test("a delivery that goes back after it was seen landed is read again before completed: not completed", async () => {
  let start = 0;
  const clean = await run(true, undefined, (twin) => void (start = twin.sim.now()), { history });
  const landed = clean.outcome.delivery!.landedAtMs! - start;
  await clean.journal.close();
  assertEquals(clean.outcome.end, "completed");
  const nats = {
    namespace: "messaging",
    kind: "pod" as const,
    name: "nats-0",
    port: "8222",
    path: "/healthz",
  };
  const r = await run(true, undefined, (twin) => {
    // The first after-merge round fails (a NATS server catching up), the next one passes; in
    // between, the branch is force-pushed without the merge and the Kustomization that applies
    // the release applies that tip, Ready: what the passing round follows is no delivery.
    twin.controllers.routes.set(nats, { status: 503, body: '{"status":"unavailable"}' });
    twin.sim.schedule(landed + 1, () => {
      const t = twin.store.findType("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")!;
      const ks = twin.store.get(t, "flux-system", "rook-ceph")!;
      const revision = `main@sha1:${OLDER}`;
      twin.store.put(t, {
        ...ks,
        status: {
          ...(ks.status as Record<string, unknown>),
          lastAppliedRevision: revision,
          lastAttemptedRevision: revision,
        },
      });
    });
    twin.sim.schedule(
      landed + 5_000,
      () => twin.controllers.routes.set(nats, { status: 200, body: '{"status":"ok"}' }),
    );
  }, { history });
  try {
    assert(r.outcome.rounds.some((x) => x.outcome.verdict === "pass"), "a round did pass");
    assertEquals(r.outcome.end, "not-delivered");
    const applied = r.outcome.delivery!.checks.find((c) => c.id === "applied")!;
    assertEquals(applied.verdict, "pending");
    assert(applied.detail.includes("an older revision without the merge"), applied.detail);
  } finally {
    await r.journal.close();
  }
});
