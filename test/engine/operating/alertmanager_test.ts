/**
 * The Alertmanager veto and expected-noise silences against a REAL Alertmanager (Debian's
 * prometheus-alertmanager) started on loopback by this test; alerts are posted through its v2 API.
 * A firing alert matching a vetoing binding fails the gate and halts the next commitment, its
 * labels and start recorded as evidence; an unreachable Alertmanager is unreadable, never a pass;
 * the expected-noise silence exists only while its node step runs (read back from Alertmanager).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { HttpAlertmanager } from "../../../src/adapters/alertmanager/http_alertmanager.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import type { Alertmanager, SilenceRecord } from "../../../src/ports/alertmanager.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { startAlertmanager } from "../../_helpers/alertmanager.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PLAN = `${ROOT}/plans/talos-v1.14.2.yaml`;
const VETO = `    - name: no-critical-alerts
      description: A firing critical alert vetoes the next node.
      reader: alertmanager-alerts
      matchers:
        - { name: severity, value: critical }
`;

/** The home-ops policy plus the veto binding, served at its path, and the plan bound to it. */
async function withVeto() {
  const real = workingTreeBoundFiles(PLAN);
  const original = await Deno.readTextFile(`${ROOT}/policies/home-ops.yaml`);
  const policy = new TextEncoder().encode(original.trimEnd() + "\n" + VETO);
  const oldSha = await sha256Hex(new TextEncoder().encode(original));
  const newSha = await sha256Hex(policy);
  const files: BoundFileSource = {
    describe: () => "working tree with the veto binding",
    read: (p) =>
      p === "policies/home-ops.yaml"
        ? Promise.resolve({ status: "read", bytes: policy })
        : real.read(p),
  };
  return { files, editPlan: (t: string) => t.replace(oldSha, newSha) };
}

Deno.test("a firing alert matching a vetoing binding halts the next commitment; the alert is the evidence", async () => {
  const am = await startAlertmanager();
  try {
    // Alertmanager refuses alerts that start in its future: this one started a minute ago.
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
    await am.fire([{
      labels: { alertname: "CephHealthError", severity: "critical", namespace: "rook-ceph" },
      startsAt,
    }]);
    await am.fire([{ labels: { alertname: "Watchdog", severity: "none" } }]);
    const veto = await withVeto();
    const w = await startInprocWorld({
      nodes: ["worker-1"],
      editPlan: veto.editPlan,
      authority: { files: veto.files },
      operating: { alertmanager: new HttpAlertmanager(am.url) },
    });
    try {
      const out = await w.run();
      assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
        ["worker-1", "not-committed", "GateFailed"],
      ]);
      assert(out.nodes[0]!.detail.startsWith("AlertFiring"), out.nodes[0]!.detail);
      assertEquals(await w.journal.listOperations(), [], "nothing was committed");
      assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0);
      const h = await w.journal.planHistory(w.bound.digest);
      const rows = h!.healthRounds.flatMap((r) => r.results)
        .filter((x) => x.binding === "no-critical-alerts");
      assert(rows.length > 0);
      assert(rows.every((x) => x.outcome === "fail" && x.reason === "AlertFiring"));
      assertEquals(
        rows[0]!.objectRef,
        `Alert CephHealthError{namespace="rook-ceph",severity="critical"} since ${startsAt}`,
      );
    } finally {
      await w.close();
    }
  } finally {
    await am.stop();
  }
});

Deno.test("an unreachable Alertmanager is unreadable, never a pass: the gate holds the commitment", async () => {
  const am = await startAlertmanager();
  const url = am.url;
  await am.stop(); // nothing listens there any more
  const veto = await withVeto();
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: veto.editPlan,
    authority: { files: veto.files },
    operating: { alertmanager: new HttpAlertmanager(url) },
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["not-committed", "GateUnreadable"]]);
    const rows = (await w.journal.planHistory(w.bound.digest))!.healthRounds
      .flatMap((r) => r.results).filter((x) => x.binding === "no-critical-alerts");
    assert(rows.length > 0 && rows.every((x) => x.outcome === "unreadable"));
    assertEquals(await w.journal.listOperations(), []);
    // The held gate was reported stalled while it waited, naming the unreadable binding.
    const stalls = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!
      .filter((e) => e.kind === "stall").map((e) => [e.node, e.detail["blocker"]]);
    assertEquals(stalls, [["worker-1", "binding no-critical-alerts"]]);
  } finally {
    await w.close();
  }
});

const NOISE = `  expectedNoise:
    - name: ceph-osd-down
      nodeLabel: hostname
      matchers:
        - { name: alertname, value: CephOSDDownHigh }
`;

Deno.test("the expected-noise silence exists only during its node step, scoped to that node (read back from Alertmanager)", async () => {
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
    const w = await startInprocWorld({
      nodes: ["worker-1", "worker-2"],
      editPlan: (t) => t + NOISE,
      editCluster: (d) => ({
        ...d,
        spec: {
          ...d.spec,
          startTime: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString(),
        },
      }),
      operating: { alertmanager: watched },
    });
    try {
      assertEquals(await real.silences(), [], "no silence before the rollout");
      const out = await w.run();
      assertEquals(out.state, "completed");
      // In force (active, or pending when virtual time ran ahead of Alertmanager's clock).
      const active = (s: SilenceRecord[]) =>
        s.filter((x) => x.state !== "expired").map((x) =>
          x.matchers.map((m) => `${m.name}=${m.value}`).sort().join(",")
        );
      assertEquals(seen.map((x) => [x.when, active(x.silences)]), [
        ["after create", ["alertname=CephOSDDownHigh,hostname=worker-1"]],
        ["before expire", ["alertname=CephOSDDownHigh,hostname=worker-1"]],
        ["after expire", []],
        ["after create", ["alertname=CephOSDDownHigh,hostname=worker-2"]],
        ["before expire", ["alertname=CephOSDDownHigh,hostname=worker-2"]],
        ["after expire", []],
      ]);
      const after = await real.silences();
      assertEquals(after.map((x) => x.state), ["expired", "expired"]);
      const events = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!;
      assertEquals(events.map((e) => [e.kind, e.node]), [
        ["silence-created", "worker-1"],
        ["silence-expired", "worker-1"],
        ["silence-created", "worker-2"],
        ["silence-expired", "worker-2"],
      ]);
      // The silence started with the step's commitment and ended with it.
      const ops = (await w.operations()).map((o) => o.operation)
        .sort((a, b) => a.createdAtMs - b.createdAtMs);
      assert(events[0]!.atMs >= ops[0]!.createdAtMs && events[1]!.atMs <= ops[1]!.createdAtMs);
    } finally {
      await w.close();
    }
  } finally {
    await am.stop();
  }
});

Deno.test("an alert muted only by cairn's own silence still fails a round; one a person silenced does not", async () => {
  const am = await startAlertmanager();
  try {
    const real = new HttpAlertmanager(am.url);
    const nowS = Math.floor(Date.now() / 1000) * 1000;
    const startsAt = new Date(nowS - 60_000).toISOString();
    await am.fire([
      {
        labels: { alertname: "CephOSDDownHigh", severity: "critical", hostname: "worker-1" },
        startsAt,
      },
      {
        labels: { alertname: "CephOSDDownHigh", severity: "critical", hostname: "worker-2" },
        startsAt,
      },
    ]);
    const silence = (host: string, createdBy: string) =>
      real.createSilence({
        matchers: [
          { name: "alertname", value: "CephOSDDownHigh", isRegex: false, isEqual: true },
          { name: "hostname", value: host, isRegex: false, isEqual: true },
        ],
        startsAtMs: nowS - 1000,
        endsAtMs: nowS + 3_600_000,
        createdBy,
        comment: "test",
      });
    // worker-1: cairn's expected-noise silence (it mutes paging, not cairn's judgement).
    await silence("worker-1", "cairn ctl_test");
    // worker-2: an operator's silence, honoured.
    await silence("worker-2", "alice@example.com");
    const firing = await real.firingAlerts([
      { name: "severity", value: "critical", isRegex: false, isEqual: true },
    ]);
    assertEquals(firing.map((a) => a.labels["hostname"]), ["worker-1"]);
  } finally {
    await am.stop();
  }
});
