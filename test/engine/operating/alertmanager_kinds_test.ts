/**
 * The Alertmanager veto for a KubernetesUpgrade and a ConfigApply, against a REAL Alertmanager
 * (Debian's prometheus-alertmanager) started on loopback by this test: their rounds read the
 * cluster's Alertmanager as a TalosUpgrade's do, so a firing alert matching a vetoing binding fails
 * the gate before the first commitment, and an unreachable Alertmanager is unreadable, never a pass:
 * the gate holds round after round within the step's window and is reported stalled, naming it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { HttpAlertmanager } from "../../../src/adapters/alertmanager/http_alertmanager.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import {
  counterIdSource,
  inprocCluster,
  inprocExecutionTiming,
} from "../../../src/app/inproc_rollout.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import {
  bindConfigApply,
  executeConfigApply,
} from "../../../src/engine/config_apply/run_config_apply.ts";
import type { Alertmanager } from "../../../src/ports/alertmanager.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { startAlertmanager } from "../../_helpers/alertmanager.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { K8S_PLAN_PATH, k8sRollout } from "../../_helpers/k8s_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const CONFIG_PLAN = `${ROOT}/plans/config-apply-ntp.yaml`;
const VETO = `    - name: no-critical-alerts
      description: A firing critical alert vetoes the next commitment.
      reader: alertmanager-alerts
      matchers:
        - { name: severity, value: critical }
`;

/** The plan's bound policy plus the veto binding, served at its path; the plan bound to it. */
async function withVeto(planPath: string, policyPath: string) {
  const real = workingTreeBoundFiles(planPath);
  const original = await Deno.readTextFile(`${ROOT}/${policyPath}`);
  const policy = new TextEncoder().encode(original.trimEnd() + "\n" + VETO);
  const oldSha = await sha256Hex(new TextEncoder().encode(original));
  const newSha = await sha256Hex(policy);
  const files: BoundFileSource = {
    describe: () => "working tree with the veto binding",
    read: (p) =>
      p === policyPath ? Promise.resolve({ status: "read", bytes: policy }) : real.read(p),
  };
  return { files, editPlan: (t: string) => t.replace(oldSha, newSha) };
}

/** The shipped ConfigApply on worker-1, gated by the veto, against `am`. */
async function configApplyWith(am: Alertmanager) {
  const veto = await withVeto(CONFIG_PLAN, "policies/home-ops.yaml");
  const twin = startInprocTwin({ description: await homeOps() });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIdSource(),
    nowMs: twin.clock.now(),
  });
  try {
    const text = veto.editPlan(onlyNodes("worker-1")(await Deno.readTextFile(CONFIG_PLAN)));
    const bytes = new TextEncoder().encode(text);
    const parsed = await parsePlan(bytes, { file: CONFIG_PLAN });
    const bound = await bindConfigApply(journal, {
      parsed,
      bytes,
      signatures: "",
      firstSeenCommit: "test",
      approver: { identity: "test", role: "approver" },
      nowMs: twin.clock.now(),
    });
    const out = await executeConfigApply({
      journal,
      bound,
      cluster: inprocCluster(twin),
      authority: { bytes, signatures: "", requiredApprovals: 1, files: veto.files },
      ...inprocExecutionTiming(twin),
      log: new MemoryLogger(),
      owner: "ctl_test",
      operating: { alertmanager: am },
    });
    const rows = await vetoRows(journal, bound.digest);
    return {
      out,
      rows,
      stalls: await stallsOf(journal, bound.digest),
      operations: (await journal.listOperations()).length,
      mutating: twin.talos.stats.totalMutating,
    };
  } finally {
    twin.stop();
    await journal.close();
  }
}

/** The stall events journaled beside the steps: node and blocker. */
async function stallsOf(journal: Journal, digest: string) {
  return ((await journal.planHistory(digest))?.rolloutEvents ?? [])
    .filter((e) => e.kind === "stall").map((e) => [e.node, e.detail["blocker"]]);
}

async function vetoRows(journal: Journal, digest: string) {
  return ((await journal.planHistory(digest))?.healthRounds ?? [])
    .flatMap((r) => r.results).filter((x) => x.binding === "no-critical-alerts");
}

Deno.test("a firing vetoing alert fails a KubernetesUpgrade's and a ConfigApply's gate; nothing is committed", async () => {
  const am = await startAlertmanager();
  try {
    // Alertmanager refuses alerts that start in its future: this one started a minute ago.
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
    await am.fire([{
      labels: { alertname: "CephHealthError", severity: "critical", namespace: "rook-ceph" },
      startsAt,
    }]);
    const client = new HttpAlertmanager(am.url);
    const veto = await withVeto(K8S_PLAN_PATH, "policies/home-ops-kubernetes.yaml");
    const w = await k8sRollout({
      planEdit: veto.editPlan,
      authority: { files: veto.files },
      operating: { alertmanager: client },
    });
    try {
      const out = await w.run();
      assertEquals(out.state, "halted");
      assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
        ["cp-1", "not-committed", "GateFailed"],
      ]);
      assert(out.nodes[0]!.detail.startsWith("AlertFiring"), out.nodes[0]!.detail);
      assertEquals(await w.journal.listOperations(), []);
      assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0);
      const rows = await vetoRows(w.journal, w.bound.digest);
      assert(rows.length > 0);
      assert(rows.every((x) => x.outcome === "fail" && x.reason === "AlertFiring"));
      assertEquals(
        rows[0]!.objectRef,
        `Alert CephHealthError{namespace="rook-ceph",severity="critical"} since ${startsAt}`,
      );
    } finally {
      await w.close();
    }
    const c = await configApplyWith(client);
    assertEquals(c.out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "not-committed", "GateFailed"],
    ]);
    assertEquals([c.operations, c.mutating], [0, 0]);
    assert(c.rows.length > 0 && c.rows.every((x) => x.reason === "AlertFiring"));
  } finally {
    await am.stop();
  }
});

Deno.test("an unreachable Alertmanager is unreadable for a KubernetesUpgrade and a ConfigApply, never a pass", async () => {
  const am = await startAlertmanager();
  const url = am.url;
  await am.stop(); // nothing listens there any more
  const client = new HttpAlertmanager(url);
  const veto = await withVeto(K8S_PLAN_PATH, "policies/home-ops-kubernetes.yaml");
  const w = await k8sRollout({
    planEdit: veto.editPlan,
    authority: { files: veto.files },
    operating: { alertmanager: client },
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "not-committed", "GateUnreadable"],
    ]);
    const rows = await vetoRows(w.journal, w.bound.digest);
    assert(rows.length > 1 && rows.every((x) => x.outcome === "unreadable"));
    assertEquals(await w.journal.listOperations(), []);
    // The held gate was reported stalled while it waited, naming the unreadable binding.
    assertEquals(await stallsOf(w.journal, w.bound.digest), [
      ["cp-1", "binding no-critical-alerts"],
    ]);
  } finally {
    await w.close();
  }
  const c = await configApplyWith(client);
  assertEquals(c.out.nodes.map((n) => [n.node, n.state, n.reason]), [
    ["worker-1", "not-committed", "GateUnreadable"],
  ]);
  assertEquals([c.operations, c.mutating], [0, 0]);
  // The ConfigApply's gate held too, round after round within its window, and was reported.
  assert(c.rows.length > 1 && c.rows.every((x) => x.outcome === "unreadable"));
  assertEquals(c.stalls, [["worker-1", "binding no-critical-alerts"]]);
});
