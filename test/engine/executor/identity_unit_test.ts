/**
 * Machine identity in the node step, against the twin's own models in process (seconds): the
 * same refusals the socket scenarios (identity_scenarios_test.ts) assert — a reused address
 * before and after the commitment, a replaced machine, an unreadable SystemInformation — each
 * before any mutation; and the plan's address as the Talos target of every mutation.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { armAfterCommit } from "../../../src/app/rehearsal.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps, type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";

const REUSED: Fault = {
  kind: "address-reused",
  point: "talos.route",
  target: "worker-1",
  params: { by: "worker-2" },
};
const REIMAGED: Fault = { kind: "machine-reimaged", point: "talos.machine", target: "worker-1" };
const UNREADABLE: Fault = {
  kind: "unavailable",
  point: "talos.cosi.Get",
  target: "worker-1",
  count: 1_000,
  params: { type: "SystemInformations.hardware.talos.dev" },
};

async function world(o: { faults?: Fault[]; afterCommit?: Fault[] }) {
  const twin = startInprocTwin({ description: await homeOps() });
  for (const f of o.faults ?? []) twin.faults.arm(f);
  const raw = await openJournal({ url: ":memory:", ids: counterIds("j"), nowMs: twin.clock.now() });
  const journal = o.afterCommit
    ? armAfterCommit(raw, "worker-1", o.afterCommit, {
      arm: (f) => Promise.resolve(twin.faults.arm(f)),
    })
    : raw;
  const w = await startInprocWorld({ nodes: ["worker-1", "worker-2"], twin, journal });
  return {
    w,
    async close() {
      await w.close();
      twin.stop();
      await raw.close();
    },
  };
}

function mutations(w: InprocWorld) {
  return [w.twin.talos.stats.totalMutating, w.twin.kube.stats.mutating];
}

async function outcome(w: InprocWorld) {
  const out = await w.run();
  return { out, nodes: out.nodes.map((n) => [n.node, n.state, n.reason]) };
}

Deno.test("in process: an address reused before the commitment refuses, no operation, nothing sent", async () => {
  const { w, close } = await world({ faults: [REUSED] });
  try {
    const { out, nodes } = await outcome(w);
    assertEquals(out.state, "refused");
    assertEquals(nodes, [["worker-1", "not-committed", "MachineIdentityMismatch"]]);
    assertEquals(await w.operations(), []);
    assertEquals(mutations(w), [0, 0]);
  } finally {
    await close();
  }
});

Deno.test("in process: a machine re-imaged after the commitment is refused at the first attempt", async () => {
  const { w, close } = await world({ afterCommit: [REIMAGED] });
  try {
    const { nodes } = await outcome(w);
    assertEquals(nodes, [["worker-1", "unresolved", "MachineIdentityMismatch"]]);
    const [d] = await w.operations();
    assertEquals([d!.operation.state, d!.attempts.length], ["unresolved", 0]);
    assertEquals(mutations(w), [0, 0]);
  } finally {
    await close();
  }
});

Deno.test("in process: an address reused after the commitment is refused at the first attempt", async () => {
  const { w, close } = await world({ afterCommit: [REUSED] });
  try {
    const { nodes } = await outcome(w);
    assertEquals(nodes, [["worker-1", "unresolved", "MachineIdentityMismatch"]]);
    assertEquals(mutations(w), [0, 0]);
  } finally {
    await close();
  }
});

Deno.test("in process: an unreadable machine identity holds before the commitment and is unresolved after it", async () => {
  const before = await world({ faults: [UNREADABLE] });
  try {
    const { out, nodes } = await outcome(before.w);
    assertEquals(out.state, "halted");
    assertEquals(nodes, [["worker-1", "not-committed", "MachineIdentityUnreadable"]]);
    assertEquals(mutations(before.w), [0, 0]);
  } finally {
    await before.close();
  }
  const after = await world({ afterCommit: [UNREADABLE] });
  try {
    const { nodes } = await outcome(after.w);
    assertEquals(nodes, [["worker-1", "unresolved", "MachineIdentityUnreadable"]]);
    assertEquals(mutations(after.w), [0, 0]);
  } finally {
    await after.close();
  }
});

Deno.test("in process: a normal step sends every Talos mutation to the plan's address", async () => {
  const { w, close } = await world({});
  try {
    const { out } = await outcome(w);
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "completed"],
    ]);
    assertEquals(Object.keys(w.twin.talos.stats.mutatingByTarget).sort(), [
      "10.5.0.6",
      "10.5.0.7",
    ]);
    // Reads too (gate and verification health rounds, identity, boot): addresses, never names.
    const names = Object.keys(w.twin.talos.stats.targets).filter((t) => !/^10\.5\.0\.\d+$/.test(t));
    assertEquals(names, []);
  } finally {
    await close();
  }
});

Deno.test("in process: recovery reads the machine against the identity the commitment bound", async () => {
  const { gatherEvidence, recoveryObservation } = await import(
    "../../../src/engine/recovery/recover_actions.ts"
  );
  const { w, close } = await world({ afterCommit: [REIMAGED] });
  try {
    await w.run();
    const [d] = await w.operations();
    const e = await gatherEvidence(w.journal, {
      operationId: d!.operation.id,
      settleFloorMs: 30_000,
      nowMs: w.twin.clock.now(),
    });
    const committed = e.boundIdentity!;
    assertEquals([committed.node, committed.address], ["worker-1", "10.5.0.6"]);
    const now = (await w.twin.kube.getNode("worker-1"))!.systemUUID;
    assertEquals(committed.machineUuid !== now, true, "the machine was replaced");
    const obs = await recoveryObservation(w.journal, {
      kube: w.twin.kube,
      talos: w.twin.talos,
      clock: w.twin.clock,
      callTimeoutMs: (ms) => ms,
    }, { e, actor: { identity: "alice", role: "recovery-admin" } });
    assertEquals(obs.summary.includes("MachineIdentityMismatch"), true, obs.summary);
  } finally {
    await close();
  }
});
