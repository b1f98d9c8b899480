/**
 * Machine identity on the twin over its real sockets (issue 11 item 3; seed 000 "a reused address
 * must not select another machine"): the commitment binds the machine observed on both sides —
 * the Kubernetes Node's systemUUID and Talos SystemInformation at the plan's address — and every
 * attempt observes it again. A reused address and a replaced (re-imaged) machine are refused
 * before any mutation: the twin's mutation counters do not move, the reason is in the journal and
 * in the execution report, and the classification follows ER (no operation before commitment;
 * `unresolved`, never `failed`, after it).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { RolloutOutcome } from "../../../src/engine/executor/rollout.ts";
import { executionReportFromJournal } from "../../../src/report/from_journal.ts";
import { renderExecutionReport } from "../../../src/report/render_execution.ts";
import type { Rehearsal } from "../../../src/app/rehearsal.ts";
import { operationOf, type Scenario, sent, startScenario } from "../../_helpers/scenario_world.ts";

const TWO = ["worker-1", "worker-2"];

/** The execution report as the reconciler renders it for this run. */
async function report(s: Rehearsal, out: RolloutOutcome): Promise<string> {
  const chain = await s.journal.verifyChain();
  assert(chain.ok);
  const model = executionReportFromJournal({
    history: await s.journal.planHistory(s.bound.digest),
    identity: {
      name: s.bound.plan.metadata.name,
      kind: "TalosUpgrade",
      cluster: s.bound.plan.metadata.cluster,
      digest: s.bound.digest,
      author: s.bound.plan.metadata.author,
      commit: "rehearsal",
      branch: "main",
      signers: [],
      approvals: { required: 1, valid: 1 },
    },
    nodes: s.bound.plan.spec.nodes.map((n) => ({ name: n.name, role: n.role })),
    hops: s.bound.plan.kind === "TalosUpgrade"
      ? s.bound.plan.spec.hops.map((h) => ({ to: h.to, schematic: h.installer.schematic }))
      : [],
    head: { headHash: chain.head, eventCount: chain.rows },
    generatedAt: await s.clock.now(),
    end: {
      state: out.state,
      reasons: out.nodes.filter((n) => n.state !== "completed").map((n) => ({
        reason: n.reason,
        message: n.detail,
        where: n.node,
      })),
    },
  });
  return renderExecutionReport(model);
}

interface ObservationRow {
  readonly id: string;
  readonly machine: string;
  readonly purpose: string;
  readonly basis: number;
  readonly digest: string;
  readonly summary: string;
  readonly machine_identity: string | null;
}

/** Evidence observations of `node` in the order recorded. */
async function evidence(s: Scenario, node: string): Promise<ObservationRow[]> {
  const rows = (await s.journal.exportAll())["observations"] as ObservationRow[];
  return rows.filter((o) => o.machine === node && o.purpose === "evidence")
    .sort((a, b) => Number(a.basis) - Number(b.basis));
}

async function uuidOf(s: Scenario, node: string): Promise<string> {
  return (await s.cluster.kube.getNode(node))!.systemUUID;
}

Deno.test("address reused before the commitment: no operation, nothing sent, MachineIdentityMismatch", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["address-reused"] });
  try {
    const before = await sent(s);
    const out = await s.run();
    assertEquals(out.state, "refused", "contrary evidence refuses; it does not merely hold");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "not-committed", "MachineIdentityMismatch"],
    ]);
    const w1 = await uuidOf(s, "worker-1"), w2 = await uuidOf(s, "worker-2");
    assert(out.nodes[0]!.detail.includes(`Node worker-1 is machine ${w1}`), out.nodes[0]!.detail);
    assert(out.nodes[0]!.detail.includes(`Talos at 10.5.0.6 is machine ${w2}`));
    assertEquals(await s.journal.listOperations(), []);
    const x = await sent(s);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
    assertEquals([before.talosMutating, before.kubeMutating], [0, 0]);
    // The refused identity is in the journal: an evidence record no comparison accepts.
    const ev = await evidence(s, "worker-1");
    assertEquals(ev.length, 1);
    assert(ev[0]!.digest.startsWith("MachineIdentityMismatch:"), ev[0]!.digest);
    assert(ev[0]!.summary.startsWith("MachineIdentityMismatch: "), ev[0]!.summary);
    const md = await report(s, out);
    assert(md.includes("MachineIdentityMismatch"), "the report says why");
    assert(/REFUSED/.test(md), "refused before the commitment, not failed");
  } finally {
    await s.stop();
  }
});

Deno.test("machine replaced and re-imaged after the commitment: unresolved before the first attempt", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["machine-reimaged"] });
  try {
    const committedUuid = await uuidOf(s, "worker-1");
    const out = await s.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "MachineIdentityMismatch"],
    ]);
    const now = await uuidOf(s, "worker-1");
    assert(now !== committedUuid, "the twin replaced the machine");
    assert(out.nodes[0]!.detail.includes(`commitment bound machine ${committedUuid}`));
    const d = await operationOf(s, "worker-1");
    assertEquals(d.operation.state, "unresolved");
    assertEquals(d.attempts, [], "no attempt was admitted");
    assertEquals(d.phases.map((p) => `${p.phase}/${p.kind}`), ["pull/intent"]);
    const x = await sent(s);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
    // The commitment's evidence bound the old machine; the attempt's evidence names the new one.
    const [atCommit, atAttempt] = await evidence(s, "worker-1");
    assertEquals(
      atCommit!.machine_identity,
      `machine=${committedUuid} node=worker-1 address=10.5.0.6`,
    );
    assert(atAttempt!.digest.startsWith("MachineIdentityMismatch:"));
    assertEquals(atAttempt!.machine_identity, null);
    const md = await report(s, out);
    assert(md.includes("MachineIdentityMismatch"));
    assert(/UNRESOLVED/.test(md));
    // Row 1 held: the re-observation refused the first send to another machine.
    assert(
      md.includes(
        "| 1 | One node chosen by declared inventory; address and client derived from it | P/E/O | pass |",
      ),
      md.split("\n").filter((l) => l.startsWith("| 1 |")).join("\n"),
    );
  } finally {
    await s.stop();
  }
});

Deno.test("address reused after the commitment: the attempt's re-observation refuses, unresolved, nothing sent", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["address-reused-after-commit"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "MachineIdentityMismatch"],
    ]);
    const d = await operationOf(s, "worker-1");
    assertEquals([d.operation.state, d.attempts.length], ["unresolved", 0]);
    const x = await sent(s);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
    const st = await s.control.stats();
    const w2 = Object.keys(st.talos.byNode["worker-2"] ?? {});
    assert(w2.every((m) => !/Pull|Upgrade|Reboot/.test(m)), `worker-2 got no mutation: ${w2}`);
  } finally {
    await s.stop();
  }
});

Deno.test("identity unreadable: before the commitment nothing is committed; after it, unresolved, never failed", async () => {
  const unavailable = {
    kind: "unavailable" as const,
    point: "talos.cosi.Get",
    target: "worker-1",
    count: 1_000,
    params: { type: "SystemInformations.hardware.talos.dev" },
  };
  const pre = await startScenario({ nodes: TWO, extraFaults: [unavailable] });
  try {
    const out = await pre.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "not-committed", "MachineIdentityUnreadable"],
    ]);
    assertEquals(await pre.journal.listOperations(), []);
    const x = await sent(pre);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
  } finally {
    await pre.stop();
  }
  const post = await startScenario({ nodes: TWO, afterCommitFaults: [unavailable] });
  try {
    const out = await post.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "MachineIdentityUnreadable"],
    ]);
    const d = await operationOf(post, "worker-1");
    assertEquals([d.operation.state, d.attempts.length], ["unresolved", 0]);
    const x = await sent(post);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
  } finally {
    await post.stop();
  }
});

Deno.test("a normal node step binds the machine and every attempt observes it again", async () => {
  const s = await startScenario({ nodes: ["worker-1"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [["worker-1", "completed"]]);
    const uuid = await uuidOf(s, "worker-1");
    const d = await operationOf(s, "worker-1");
    const ev = await evidence(s, "worker-1");
    // One evidence record at commitment plus one per attempt, all naming the same machine.
    assertEquals(ev.length, 1 + d.attempts.length);
    for (const e of ev) {
      assertEquals(e.machine_identity, `machine=${uuid} node=worker-1 address=10.5.0.6`);
    }
    for (const a of d.attempts) assert(ev.some((e) => e.id === a.evidenceId));
    // Every Talos mutation went to the plan's address, i.e. reached worker-1's machine.
    const st = await s.control.stats();
    const mutatedOn = Object.entries(st.talos.byNode).filter(([, m]) =>
      Object.keys(m).some((k) => /Pull|Upgrade|Reboot/.test(k))
    ).map(([n]) => n);
    assertEquals(mutatedOn, ["worker-1"]);
    // …sent with the plan's address as the node target, never the Kubernetes node name.
    assertEquals(Object.keys(st.talos.mutatingByTarget), ["10.5.0.6"]);
  } finally {
    await s.stop();
  }
});
