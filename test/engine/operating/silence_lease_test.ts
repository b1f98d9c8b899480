/**
 * Expected-noise silences as leases, against a REAL Alertmanager (Debian's prometheus-alertmanager)
 * started on loopback: a step longer than the lease keeps ONE silence, renewed in place by id
 * (read back from Alertmanager at every renewal), never lapsing mid-step and expired at the step's
 * end; after a controller dies mid-step, the next one finds the journaled silence and expires it
 * by id, creating none, and the dead one's late renewal does not revive it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { HttpAlertmanager } from "../../../src/adapters/alertmanager/http_alertmanager.ts";
import { silenceLeaseMs } from "../../../src/engine/operating/silences.ts";
import type { Alertmanager, SilenceRecord } from "../../../src/ports/alertmanager.ts";
import type { ClusterDescription } from "../../../src/sim/cluster_description.ts";
import { startAlertmanager } from "../../_helpers/alertmanager.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";

const NOISE = `  expectedNoise:
    - name: ceph-osd-down
      nodeLabel: hostname
      matchers:
        - { name: alertname, value: CephOSDDownHigh }
`;

/** Alertmanager keeps real time: the twin starts now, so the lease's times are real ones. */
const startingNow = (d: ClusterDescription): ClusterDescription => ({
  ...d,
  spec: { ...d.spec, startTime: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString() },
});

const live = (s: readonly SilenceRecord[]) => s.filter((x) => x.state !== "expired");
const matchersOf = (s: SilenceRecord) =>
  s.matchers.map((m) => `${m.name}=${m.value}`).sort().join(",");

Deno.test("a step longer than its lease keeps one silence, renewed in place by id, expired at its end", async () => {
  const am = await startAlertmanager();
  try {
    const real = new HttpAlertmanager(am.url);
    const creates: string[] = [];
    const renewals: Array<{ id: string; answered: string; live: SilenceRecord[] }> = [];
    const watched: Alertmanager = {
      describe: () => real.describe(),
      firingAlerts: (m, o) => real.firingAlerts(m, o),
      silences: (o) => real.silences(o),
      getSilence: (id, o) => real.getSilence(id, o),
      expireSilence: (id, o) => real.expireSilence(id, o),
      async createSilence(spec, o) {
        const id = await real.createSilence(spec, o);
        creates.push(id);
        return id;
      },
      async updateSilence(id, spec, o) {
        const answered = await real.updateSilence(id, spec, o);
        renewals.push({ id, answered, live: live(await real.silences()) });
        return answered;
      },
    };
    const w = await startInprocWorld({
      nodes: ["worker-1"],
      editPlan: (t) => t + NOISE,
      editCluster: startingNow,
      // The kubelet stays unhealthy for 18 minutes after the reboot: verification waits it out,
      // so the step runs well past one lease.
      faults: [{
        kind: "service-unhealthy",
        point: "talos.service",
        target: "worker-1",
        params: { service: "kubelet", durationMs: 18 * 60_000 },
      }],
      operating: { alertmanager: watched },
    });
    try {
      const out = await w.run();
      assertEquals(out.state, "completed");
      const [op] = await w.operations();
      const events = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!
        .filter((e) => e.kind.startsWith("silence-"));
      const lease = silenceLeaseMs(w.bound.plan);
      const stepMs = events.at(-1)!.atMs - events[0]!.atMs;
      assert(stepMs > lease, `the step (${stepMs} ms) outlasts one lease (${lease} ms)`);
      // Created once, renewed while the step ran, expired at its end: always the same silence.
      assertEquals(events[0]!.kind, "silence-created");
      assertEquals(events.at(-1)!.kind, "silence-expired");
      const middle = events.slice(1, -1);
      assert(middle.length >= 3, `renewed ${middle.length} times`);
      assert(middle.every((e) => e.kind === "silence-renewed" && e.detail["reason"] === undefined));
      const id = events[0]!.detail["silence"];
      assertEquals(creates, [id]);
      assert(
        events.every((e) =>
          e.detail["silence"] === id && e.detail["operation"] === op!.operation.id
        ),
      );
      // Never lapsed mid-step: each renewal and the final expiry came before the end then in force.
      let endsAt = Number(events[0]!.detail["endsAtMs"]);
      for (const e of events.slice(1)) {
        assert(e.atMs < endsAt, `${e.kind} at ${e.atMs} after the lease ended at ${endsAt}`);
        if (e.kind === "silence-renewed") endsAt = Number(e.detail["endsAtMs"]);
      }
      // Read back at every renewal: Alertmanager kept the id and held exactly one live silence,
      // with exactly the plan's matchers plus the node, ending where the renewal put it.
      assertEquals(renewals.length, middle.length);
      for (const [i, r] of renewals.entries()) {
        assertEquals([r.answered, r.live.map((x) => x.id)], [id, [id]]);
        assertEquals(matchersOf(r.live[0]!), "alertname=CephOSDDownHigh,hostname=worker-1");
        assertEquals(r.live[0]!.endsAtMs, Number(middle[i]!.detail["endsAtMs"]));
      }
      // After the step: the one silence Alertmanager ever held for it, expired.
      const after = await real.silences();
      assertEquals(after.map((x) => [x.id, x.state]), [[id, "expired"]]);
      // The report folds the routine renewals into the row that ends the silence.
      const report = await inprocReport(w, out);
      const rows = report.split("\n").filter((l) => l.includes("| silence-"));
      assertEquals(rows.length, 2, rows.join("\n"));
      assert(rows[1]!.includes(`renewals=${middle.length}`), rows[1]);
    } finally {
      await w.close();
    }
  } finally {
    await am.stop();
  }
});

Deno.test("after a controller dies mid-step, the next expires the journaled silence by id before anything else and its resumed step holds one lease of its own; the dead one's late renewal does not revive it", async () => {
  const am = await startAlertmanager();
  try {
    const real = new HttpAlertmanager(am.url);
    // The first controller "dies" in its first renewal: it has read the silence live, and its
    // update by id does not go out until the test lets it, after its successor has taken over.
    const gate: { release?: () => void } = {};
    const blocked = new Promise<void>((r) => gate.release = r);
    const reachedRenewal: { done?: () => void } = {};
    const atRenewal = new Promise<void>((r) => reachedRenewal.done = r);
    const firstCalls: string[] = [];
    const first: Alertmanager = {
      describe: () => real.describe(),
      firingAlerts: (m, o) => real.firingAlerts(m, o),
      silences: (o) => real.silences(o),
      getSilence: (id, o) => real.getSilence(id, o),
      async createSilence(spec, o) {
        firstCalls.push("create");
        return await real.createSilence(spec, o);
      },
      async updateSilence(id, spec, o) {
        reachedRenewal.done!();
        await blocked;
        const answered = await real.updateSilence(id, spec, o);
        firstCalls.push(answered === id ? "update" : "update answered a new silence");
        return answered;
      },
      async expireSilence(id, o) {
        firstCalls.push("expire");
        await real.expireSilence(id, o);
      },
    };
    const secondCalls: string[] = [];
    const second: Alertmanager = {
      describe: () => real.describe(),
      firingAlerts: (m, o) => real.firingAlerts(m, o),
      silences: (o) => real.silences(o),
      getSilence: (id, o) => real.getSilence(id, o),
      async createSilence(spec, o) {
        secondCalls.push("create");
        return await real.createSilence(spec, o);
      },
      async updateSilence(id, spec, o) {
        secondCalls.push("update");
        return await real.updateSilence(id, spec, o);
      },
      async expireSilence(id, o) {
        secondCalls.push(`expire ${id}`);
        await real.expireSilence(id, o);
      },
    };
    const fault = {
      kind: "service-unhealthy" as const,
      point: "talos.service",
      target: "worker-1",
      params: { service: "kubelet", durationMs: 18 * 60_000 },
    };
    const a = await startInprocWorld({
      nodes: ["worker-1"],
      editPlan: (t) => t + NOISE,
      editCluster: startingNow,
      faults: [fault],
      operating: { alertmanager: first },
    });
    try {
      const dying = a.run({ owner: "ctl_first" }).then(
        (o) => o.state,
        (e) => `threw ${e}`,
      );
      await atRenewal;
      const [silence] = live(await real.silences());
      assert(silence, "the first controller's silence is live");
      // The successor: same journal, same cluster, another controller.
      const b = await startInprocWorld({
        nodes: ["worker-1"],
        editPlan: (t) => t + NOISE,
        journal: a.journal,
        twin: a.twin,
        operating: { alertmanager: second },
      });
      const out = await b.run({ owner: "ctl_second" });
      assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
        ["worker-1", "completed", "CompletionObserved"],
      ]);
      // The orphan is expired by its id before anything else; the step the successor resumes
      // (docs/recovery.md, resume after a takeover) then holds one lease of its own, renewed by
      // id and expired at its end — never a second silence beside the orphan.
      assertEquals(secondCalls[0], `expire ${silence.id}`, "the orphan expired by id first");
      const own = secondCalls.at(-1)!.replace(/^expire /, "");
      assert(own !== silence.id && secondCalls.at(-1)!.startsWith("expire "), secondCalls.join());
      assertEquals(
        secondCalls.slice(1, -1).filter((c) => c !== "update"),
        ["create"],
        "one lease created for the resumed step, then only renewals by id",
      );
      assertEquals(secondCalls[1], "create");
      assertEquals(
        (await real.silences()).map((x) => [x.id, x.state]).sort(),
        [[silence.id, "expired"], [own, "expired"]].sort(),
      );
      const released = (await a.journal.planHistory(a.bound.digest))!.rolloutEvents!
        .filter((e) => e.actor.includes("ctl_second"));
      assertEquals(released[0] && [released[0].kind, released[0].detail["reason"]], [
        "silence-expired",
        "SilenceLeaseReleased",
      ]);
      assertEquals(released[0]!.detail["silence"], silence.id);
      assertEquals(
        released.slice(1).filter((e) => e.detail["silence"] !== own),
        [],
        "after the orphan, every event is the resumed step's own lease",
      );
      // The first controller wakes and sends its update by id: Alertmanager answers with a new
      // silence (the old one had ended), which the lease, never revived, expires at once.
      gate.release!();
      await dying;
      assertEquals(firstCalls, ["create", "update answered a new silence", "expire"]);
      assertEquals(live(await real.silences()), [], "no live silence is left for the step");
      const lapsed = (await a.journal.planHistory(a.bound.digest))!.rolloutEvents!
        .filter((e) => e.actor.includes("ctl_first") && e.detail["reason"] === "SilenceLapsed");
      assertEquals(lapsed.length, 1);
    } finally {
      await a.close();
    }
  } finally {
    await am.stop();
  }
});
