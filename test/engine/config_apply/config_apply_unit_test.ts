/**
 * ConfigApply on the in-process twin with the real libSQL journal: an immediate change observed
 * active; a change whose setting needs a reboot (`config-activation-deferred`) reported stored but
 * not yet active and the operation failed, never completed on a matching digest; an etcd change
 * staged and activated by a separate, journaled reboot; a mode the running minor rejects refused
 * before any write; an unknown setting held.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { inprocCluster, inprocExecutionTiming } from "../../../src/app/inproc_rollout.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { judgeExecution } from "../../../src/domain/safeguards/judge_execution.ts";
import type { OperationHistory, PlanHistory } from "../../../src/ports/journal_history.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import {
  bindConfigApply,
  type ConfigRolloutOutcome,
  executeConfigApply,
} from "../../../src/engine/config_apply/run_config_apply.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../../src/sim/cluster_description.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { type InprocTwin, startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN_PATH = join(ROOT, "plans/config-apply-ntp.yaml");
const PATCH_PATH = "talos/home-ops/ntp-patch.yaml";
const NTP = "machine:\n  time:\n    servers:\n      - pool.ntp.org\n";
const ETCD = 'cluster:\n  etcd:\n    extraArgs:\n      election-timeout: "10000"\n';

interface World {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly out: ConfigRolloutOutcome;
}

/** The patch served at the plan's bound path; everything else from this repository. */
function filesWith(patch: string): BoundFileSource {
  const repo = workingTreeBoundFiles(PLAN_PATH);
  return {
    describe: () => repo.describe(),
    read: (p) =>
      p === PATCH_PATH
        ? Promise.resolve({ status: "read", bytes: new TextEncoder().encode(patch) })
        : repo.read(p),
  };
}

async function run(o: {
  patch: string;
  mode?: string;
  activation?: string;
  talos?: string;
  nodes?: string[];
  faults?: Fault[];
  /** Node version (default: the plan's). */
  nodeTalos?: string;
  /** The bytes the repository serves at the patch path (default: the bound patch). */
  served?: string;
  /** Changes the twin before the run. */
  before?: (twin: InprocTwin) => void;
}): Promise<World> {
  const desc: ClusterDescription = ClusterDescriptionSchema.parse(
    parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
  const nodeTalos = o.nodeTalos ?? o.talos;
  if (nodeTalos) { for (const n of desc.spec.nodes) n.talosVersion = nodeTalos; }
  const twin = startInprocTwin({ description: desc, ...(o.faults ? { faults: o.faults } : {}) });
  o.before?.(twin);
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds(),
    nowMs: twin.clock.now(),
  });
  let text = await Deno.readTextFile(PLAN_PATH);
  if (o.nodes) text = onlyNodes(...o.nodes)(text);
  text = text.replace(
    /sha256: [0-9a-f]{64}\n {2}nodes:/,
    `sha256: ${await sha256Hex(new TextEncoder().encode(o.patch))}\n  nodes:`,
  )
    .replace("mode: noReboot", `mode: ${o.mode ?? "noReboot"}`)
    .replace("activation: immediate", `activation: ${o.activation ?? "immediate"}`)
    .replace("talosVersion: v1.13.9", `talosVersion: ${o.talos ?? "v1.13.9"}`);
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: PLAN_PATH });
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
    authority: {
      bytes,
      signatures: "",
      requiredApprovals: 1,
      files: filesWith(o.served ?? o.patch),
    },
    ...inprocExecutionTiming(twin),
    log: new MemoryLogger(),
    owner: "ctl_test",
  });
  return { twin, journal, out };
}

async function close(w: World) {
  w.twin.stop();
  await w.journal.close();
}

async function phasesOf(w: World, opId: string) {
  const d = await w.journal.showOperation(opId);
  return d!;
}

Deno.test("an immediate time-server change is observed active on every node and completes", async () => {
  const w = await run({ patch: NTP, nodes: ["worker-1", "cp-1"] });
  try {
    assertEquals(w.out.state, "completed", JSON.stringify(w.out.nodes));
    for (const n of w.out.nodes) {
      assertEquals(n.settings?.map((s) => [s.path, s.state]), [["machine.time.servers", "active"]]);
      assertEquals(w.twin.cluster.nodes.get(n.node)!.machineConfig.runningTimeServers, [
        "pool.ntp.org",
      ]);
    }
  } finally {
    await close(w);
  }
});

Deno.test("a setting that needs a reboot is reported stored, not yet active: failed, never completed on the digest", async () => {
  const w = await run({
    patch: NTP,
    nodes: ["worker-1"],
    faults: [{ kind: "config-activation-deferred", point: "talos.config", target: "worker-1" }],
  });
  try {
    assertEquals(w.out.state, "halted");
    const n = w.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["failed", "ConfigNotActive"]);
    assertEquals(n.settings?.map((s) => [s.path, s.state]), [[
      "machine.time.servers",
      "not-active",
    ]]);
    assert(n.detail.includes("stored=yes"), n.detail);
    assert(n.detail.includes("stored, not yet active: machine.time.servers"), n.detail);
    // The node stores and even activates the document: only the running service says otherwise.
    const mc = w.twin.cluster.nodes.get("worker-1")!.machineConfig;
    assertEquals(mc.persistent, mc.active);
    assertEquals(mc.runningTimeServers, ["time.cloudflare.com"]);
    const history = await w.journal.planHistory((await w.journal.listOperations())[0]!.planDigest);
    const op = history!.operations[0]!;
    const completion = op.observations.filter((o) => o.purpose === "completion");
    assertEquals(completion.length, 1);
    assert(completion[0]!.summary.includes("stored, not yet active"), completion[0]!.summary);
    assert(!completion[0]!.summary.includes("pool.ntp.org"), "values never reach the record");
    assertEquals(op.state, "failed");
  } finally {
    await close(w);
  }
});

Deno.test("an etcd change is staged, then activated by a separate journaled reboot, then observed", async () => {
  const w = await run({
    patch: ETCD,
    mode: "staged",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
  });
  try {
    assertEquals(w.out.state, "completed", JSON.stringify(w.out.nodes));
    const n = w.out.nodes[0]!;
    assertEquals(n.settings?.map((s) => [s.path, s.state]), [[
      "cluster.etcd.extraArgs.election-timeout",
      "active",
    ]]);
    const op = await phasesOf(w, n.operationId!);
    // Each with its intent: the staged apply, then the node out of service (cordon, drain), the
    // reboot, and once it is back, the uncordon of its own cordon.
    assertEquals(op.attempts.map((a) => [a.phase, a.responseClass]), [
      ["config-apply", "accepted"],
      ["cordon", "accepted"],
      ["drain", "accepted"],
      ["reboot", "accepted"],
      ["uncordon", "accepted"],
    ]);
    const kinds = op.phases.map((p) => `${p.phase}:${p.kind}`);
    assertEquals(kinds.filter((k) => k.startsWith("config-apply") || k.startsWith("reboot")), [
      "config-apply:intent",
      "config-apply:fact",
      "reboot:intent",
    ]);
    assertEquals((await w.twin.kube.getNode("cp-1"))?.unschedulable, false);
    assert(kinds.includes("boot-observed:fact"));
    assert(
      w.twin.cluster.nodes.get("cp-1")!.history.some((h) => h === "apply-config STAGED -> STAGED"),
    );
  } finally {
    await close(w);
  }
});

Deno.test("a staged change whose node never returns from its reboot is unresolved: nothing is claimed active or failed", async () => {
  const w = await run({
    patch: ETCD,
    mode: "staged",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
    faults: [{ kind: "no-return-from-reboot", point: "talos.boot", target: "cp-1" }],
  });
  try {
    const n = w.out.nodes[0]!;
    // No new boot by the deadline: a timeout, so unresolved before any setting is judged.
    assertEquals([n.state, n.reason], ["unresolved", "BootNotObserved"]);
    assertEquals(n.settings, undefined);
    assert(n.detail.includes("no new boot observed"), n.detail);
  } finally {
    await close(w);
  }
});

Deno.test("a mode the running minor rejects is refused before any write", async () => {
  const r = await run({
    patch: ETCD,
    mode: "reboot",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
  });
  try {
    const n = r.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["not-committed", "ConfigApplyModeUnsupported"]);
    assertEquals(r.out.state, "refused");
    assertEquals(r.twin.talos.stats.totalMutating, 0);
    assertEquals(await r.journal.listOperations(), []);
  } finally {
    await close(r);
  }
});

Deno.test("an effective change with an uncovered setting holds before any write", async () => {
  const w = await run({
    patch: NTP + "  features:\n    rbac: false\n",
    nodes: ["worker-1"],
  });
  try {
    const n = w.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["not-committed", "ConfigActivationUnknown"]);
    assert(n.detail.includes("machine.features.rbac"), n.detail);
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a declared class the diff does not have is refused before any write", async () => {
  const w = await run({ patch: ETCD, nodes: ["cp-1"], talos: "v1.14.2" });
  try {
    const n = w.out.nodes[0]!;
    assertEquals(n.reason, "ConfigApplyModeMismatch");
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a patch that is not the bound bytes is refused before any write", async () => {
  const w = await run({ patch: NTP, served: NTP.replace("pool", "evil"), nodes: ["worker-1"] });
  try {
    assertEquals(w.out.state, "refused");
    assertEquals(w.out.nodes[0]!.reason, "ConfigPatchDigestMismatch");
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a node that runs another version than the plan names is refused before any write", async () => {
  const w = await run({ patch: NTP, nodeTalos: "v1.14.2", nodes: ["worker-1"] });
  try {
    assertEquals(w.out.nodes[0]!.reason, "NodeVersionUnexpected");
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

Deno.test("a staged change already pending on the node holds: it would be overwritten unseen", async () => {
  const w = await run({
    patch: NTP,
    nodes: ["worker-1"],
    before: (twin) => twin.cluster.nodes.get("worker-1")!.machineConfig.stage("machine: {}\n"),
  });
  try {
    assertEquals(w.out.nodes[0]!.reason, "ConfigStagedPending");
    assertEquals(w.twin.talos.stats.totalMutating, 0);
  } finally {
    await close(w);
  }
});

function rows(h: PlanHistory) {
  return new Map(judgeExecution({ ...h, hops: [] }).map((r) => [r.id, r]));
}

function editOp(h: PlanHistory, f: (o: OperationHistory) => OperationHistory): PlanHistory {
  return { ...h, operations: h.operations.map(f) };
}

Deno.test("the execution rows of a ConfigApply: 2 and 10 not applicable, 20 and 21 from its own records", async () => {
  const w = await run({
    patch: ETCD,
    mode: "staged",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
  });
  try {
    const h = (await w.journal.planHistory((await w.journal.listOperations())[0]!.planDigest))!;
    const r = rows(h);
    assertEquals(r.get("SchematicPreserved")?.verdict, "not-applicable");
    assertEquals(r.get("InstallerImageExists")?.verdict, "not-applicable");
    assertEquals(r.get("PhasesRecordedSeparately")?.verdict, "pass");
    assertEquals(r.get("PostconditionsThenOwnedUncordon")?.verdict, "pass");
    assert(r.get("PostconditionsThenOwnedUncordon")!.evidence.includes("observed active"));
    // An explicit activation without its own reboot attempt fails row 20.
    const noReboot = editOp(h, (o) => ({
      ...o,
      attempts: o.attempts.filter((a) => a.phase !== "reboot"),
    }));
    assertEquals(rows(noReboot).get("PhasesRecordedSeparately")?.verdict, "fail");
    // A reboot without the drain before it fails row 20.
    const noDrain = editOp(h, (o) => ({
      ...o,
      attempts: o.attempts.filter((a) => a.phase !== "drain"),
    }));
    assertEquals(rows(noDrain).get("PhasesRecordedSeparately")?.verdict, "fail");
    assert(rows(noDrain).get("PhasesRecordedSeparately")!.evidence.includes("completed drain"));
    // An uncordon of a cordon the operation recorded as not its own fails row 21.
    const foreign = editOp(h, (o) => ({
      ...o,
      phases: o.phases.map((p) =>
        p.phase === "cordon" && p.kind === "fact"
          ? { ...p, detail: { ...p.detail, priorUnschedulable: true, cordonedByOperation: false } }
          : p
      ),
    }));
    assertEquals(rows(foreign).get("PostconditionsThenOwnedUncordon")?.verdict, "fail");
    assert(rows(foreign).get("PostconditionsThenOwnedUncordon")!.evidence.includes("not record"));
    // Completed on anything but the bound postcondition (every setting active) fails row 21.
    const onDigest = editOp(h, (o) => ({
      ...o,
      observations: o.observations.map((x) =>
        x.purpose === "completion" ? { ...x, digest: "stored-only" } : x
      ),
    }));
    assertEquals(rows(onDigest).get("PostconditionsThenOwnedUncordon")?.verdict, "fail");
  } finally {
    await close(w);
  }
});

/** Every stored-configuration read answered with the one before it (a lagging apid proxy). */
const STALE_STORED: Fault = {
  kind: "stale-read",
  point: "talos.cosi.Get",
  target: "cp-1",
  count: 1_000_000,
  params: { lag: 1, type: "MachineConfigs.config.talos.dev" },
};

Deno.test("a stored-document read answered from before the apply is read again: the staged change is activated, never ConfigNotStored", async () => {
  const w = await run({
    patch: ETCD,
    mode: "staged",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
    faults: [STALE_STORED],
  });
  try {
    assert(w.twin.faults.fired.some((f) => f.kind === "stale-read"), "a stale answer was served");
    assertEquals(w.out.state, "completed", JSON.stringify(w.out.nodes));
    const op = await phasesOf(w, w.out.nodes[0]!.operationId!);
    const fact = op.phases.find((p) => p.phase === "config-apply" && p.kind === "fact")!;
    assertEquals(JSON.parse(fact.detail)["persistentHoldsSent"], true);
    assertEquals(op.attempts.filter((a) => a.phase === "reboot").length, 1);
  } finally {
    await close(w);
  }
});

Deno.test("an active-document read answered from before the reboot is read again: the completion read never fails a change observed active", async () => {
  // Every other configuration read answers what the machine said two reads before: the
  // completion read lands on one from before the activating reboot.
  const w = await run({
    patch: ETCD,
    mode: "staged",
    activation: "explicitActivation",
    talos: "v1.14.2",
    nodes: ["cp-1"],
    faults: [{ ...STALE_STORED, params: { ...STALE_STORED.params, lag: 2, every: 2 } }],
  });
  try {
    assert(w.twin.faults.fired.some((f) => f.kind === "stale-read"), "a stale answer was served");
    assertEquals(w.out.state, "completed", JSON.stringify(w.out.nodes));
    assertEquals(w.out.nodes[0]!.settings?.map((s) => s.state), ["active"]);
  } finally {
    await close(w);
  }
});
