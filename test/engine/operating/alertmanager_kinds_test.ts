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
import type { Alertmanager, SilenceRecord } from "../../../src/ports/alertmanager.ts";
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

const NOISE = `  expectedNoise:
    - name: ceph-osd-down
      nodeLabel: hostname
      matchers:
        - { name: alertname, value: CephOSDDownHigh }
`;

Deno.test("a ConfigApply's expected-noise silence exists only during its node step, scoped to that node (read back from Alertmanager)", async () => {
  const am = await startAlertmanager();
  try {
    const real = new HttpAlertmanager(am.url);
    const seen: Array<{ when: string; silences: SilenceRecord[] }> = [];
    // Reads the real Alertmanager back at the step's boundaries, inside the executor's own calls.
    const watched: Alertmanager = {
      describe: () => real.describe(),
      firingAlerts: (m, o) => real.firingAlerts(m, o),
      silences: (o) => real.silences(o),
      getSilence: (id, o) => real.getSilence(id, o),
      updateSilence: (id, spec, o) => real.updateSilence(id, spec, o),
      async createSilence(spec, o) {
        const id = await real.createSilence(spec, o);
        seen.push({ when: "after create", silences: await real.silences() });
        return id;
      },
      async expireSilence(id, o) {
        seen.push({ when: "before expire", silences: await real.silences() });
        await real.expireSilence(id, o);
        seen.push({ when: "after expire", silences: await real.silences() });
      },
    };
    // Alertmanager keeps real time: the twin starts now, so the lease's times are real ones.
    const description = await homeOps();
    description.spec.startTime = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    const twin = startInprocTwin({ description });
    const journal = await openJournal({
      url: ":memory:",
      ids: counterIdSource(),
      nowMs: twin.clock.now(),
    });
    try {
      const text = onlyNodes("worker-1", "worker-2")(await Deno.readTextFile(CONFIG_PLAN)) + NOISE;
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
      assertEquals(await real.silences(), [], "no silence before the rollout");
      const out = await executeConfigApply({
        journal,
        bound,
        cluster: inprocCluster(twin),
        authority: {
          bytes,
          signatures: "",
          requiredApprovals: 1,
          files: workingTreeBoundFiles(CONFIG_PLAN),
        },
        ...inprocExecutionTiming(twin),
        log: new MemoryLogger(),
        owner: "ctl_test",
        operating: { alertmanager: watched },
      });
      assertEquals(out.state, "completed", JSON.stringify(out.nodes));
      // In force (active, or pending when virtual time ran ahead of Alertmanager's clock).
      const live = (x: SilenceRecord[]) =>
        x.filter((y) => y.state !== "expired").map((y) =>
          y.matchers.map((m) => `${m.name}=${m.value}`).sort().join(",")
        );
      assertEquals(seen.map((x) => [x.when, live(x.silences)]), [
        ["after create", ["alertname=CephOSDDownHigh,hostname=worker-1"]],
        ["before expire", ["alertname=CephOSDDownHigh,hostname=worker-1"]],
        ["after expire", []],
        ["after create", ["alertname=CephOSDDownHigh,hostname=worker-2"]],
        ["before expire", ["alertname=CephOSDDownHigh,hostname=worker-2"]],
        ["after expire", []],
      ]);
      const events = (await journal.planHistory(bound.digest))!.rolloutEvents!;
      assertEquals(events.map((e) => [e.kind, e.node]), [
        ["silence-created", "worker-1"],
        ["silence-expired", "worker-1"],
        ["silence-created", "worker-2"],
        ["silence-expired", "worker-2"],
      ]);
      // The silence started with the step's commitment and ended before the next one.
      const ops = (await journal.listOperations()).sort((a, b) => a.createdAtMs - b.createdAtMs);
      assert(events[0]!.atMs >= ops[0]!.createdAtMs && events[1]!.atMs <= ops[1]!.createdAtMs);
    } finally {
      twin.stop();
      await journal.close();
    }
  } finally {
    await am.stop();
  }
});

Deno.test("a KubernetesUpgrade's post-gate keeps reading within the window: one failing round right after a component settles does not fail it", async () => {
  // An Alertmanager (in memory) whose critical alert fires for the first post-gate round only, as
  // a restart's brief alert would.
  const state = { armed: false, fired: 0 };
  const am: Alertmanager = {
    describe: () => "memory",
    firingAlerts: () => {
      if (!state.armed) return Promise.resolve([]);
      state.armed = false;
      state.fired++;
      return Promise.resolve([{
        fingerprint: "f1",
        labels: { alertname: "KubeAPIErrorsHigh", severity: "critical" },
        startsAt: "2026-01-01T00:00:00Z",
        state: "active",
      }]);
    },
    createSilence: () => Promise.reject(new Error("unused")),
    updateSilence: () => Promise.reject(new Error("unused")),
    getSilence: () => Promise.resolve(undefined),
    expireSilence: () => Promise.resolve(),
    silences: () => Promise.resolve([]),
  };
  const veto = await withVeto(K8S_PLAN_PATH, "policies/home-ops-kubernetes.yaml");
  const w = await k8sRollout({
    planEdit: veto.editPlan,
    authority: { files: veto.files },
    operating: { alertmanager: am },
  });
  const stop = new AbortController();
  try {
    const out = await w.run({
      signal: stop.signal,
      observer: {
        onOperationState: (e) => {
          // The first step's operation moves to verifying right before its post-gate.
          if (e.state === "verifying" && state.fired === 0) state.armed = true;
          if (e.state === "completed" || e.state === "failed" || e.state === "unresolved") {
            stop.abort();
          }
        },
      },
    });
    assertEquals(state.fired, 1, "the first post-gate round saw the alert");
    const first = out.nodes[0]!;
    assertEquals([first.state, first.reason], ["completed", "CompletionObserved"], first.detail);
    const rows = await vetoRows(w.journal, w.bound.digest);
    assert(rows.some((x) => x.outcome === "fail" && x.reason === "AlertFiring"));
  } finally {
    await w.close();
  }
});
