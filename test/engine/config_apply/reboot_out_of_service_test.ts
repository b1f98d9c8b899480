/**
 * A ConfigApply's explicit reboot on the in-process twin takes the node out of service first
 * (docs/config-apply.md#the-reboot): cordon with its provenance recorded, a drain through the
 * Eviction API only (a PDB-protected pod evicted, never deleted), then the reboot, the node
 * observed back, the setting observed active, and only cairn's own cordon lifted. A node someone
 * else cordoned stays cordoned.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { inprocCluster, inprocExecutionTiming } from "../../../src/app/inproc_rollout.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import {
  bindConfigApply,
  type ConfigRolloutOutcome,
  executeConfigApply,
} from "../../../src/engine/config_apply/run_config_apply.ts";
import type { ExecutionObserver } from "../../../src/engine/executor/deps.ts";
import { MACHINE_CONFIG } from "../../../src/engine/config_apply/readback.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { Journal, OperationDetail } from "../../../src/ports/journal.ts";
import type { Talos } from "../../../src/ports/talos.ts";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { type InprocTwin, startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { InprocKube } from "../../../src/sim/inproc/kube.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN_PATH = join(ROOT, "plans/config-apply-ntp.yaml");
const PATCH_PATH = "talos/home-ops/ntp-patch.yaml";
/** An environment retained by running services: it takes effect only after a reboot. */
const ENV = "machine:\n  env:\n    HTTPS_PROXY: http://proxy.internal:3128\n";
const NODE = "worker-1";

type R = Record<string, unknown>;

interface World {
  readonly twin: InprocTwin;
  readonly journal: Journal;
  readonly out: ConfigRolloutOutcome;
}

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

/** The reboot-only change staged on worker-1 (Talos v1.14.2), run to its end. */
async function run(o: {
  before?: (twin: InprocTwin) => Promise<void>;
  observer?: (twin: InprocTwin) => ExecutionObserver;
  /** Replaces the Talos client the executor talks to (the twin's own by default). */
  talos?: (twin: InprocTwin) => Talos;
} = {}): Promise<World> {
  const desc = ClusterDescriptionSchema.parse(
    parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
  for (const n of desc.spec.nodes) n.talosVersion = "v1.14.2";
  const twin = startInprocTwin({ description: desc });
  await o.before?.(twin);
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds(),
    nowMs: twin.clock.now(),
  });
  const text = onlyNodes(NODE)(await Deno.readTextFile(PLAN_PATH))
    .replace(
      /sha256: [0-9a-f]{64}\n {2}nodes:/,
      `sha256: ${await sha256Hex(new TextEncoder().encode(ENV))}\n  nodes:`,
    )
    .replace("mode: noReboot", "mode: staged")
    .replace("activation: immediate", "activation: explicitActivation")
    .replace("talosVersion: v1.13.9", "talosVersion: v1.14.2");
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
    cluster: { ...inprocCluster(twin), ...(o.talos ? { talos: o.talos(twin) } : {}) },
    authority: { bytes, signatures: "", requiredApprovals: 1, files: filesWith(ENV) },
    ...inprocExecutionTiming(twin),
    log: new MemoryLogger(),
    owner: "ctl_test",
    ...(o.observer ? { observer: o.observer(twin) } : {}),
  });
  return { twin, journal, out };
}

/** The first fact a phase recorded. */
function fact(op: OperationDetail, phase: string): Record<string, unknown> {
  const p = op.phases.find((x) => x.phase === phase && x.kind === "fact");
  assert(p, `a ${phase} fact was recorded`);
  return JSON.parse(p.detail) as Record<string, unknown>;
}

/** Another client of the same cluster writing under its own field manager (an operator). */
function createInprocKube(twin: InprocTwin, fieldManager: string): InprocKube {
  return new InprocKube({
    store: twin.store,
    controllers: twin.controllers,
    time: twin.time,
    faults: twin.faults,
    kubernetesVersion: "v1.35.2",
    fieldManager,
  });
}

/** Pods on `node` that a PodDisruptionBudget selects (matchLabels), by namespace/name. */
function pdbProtectedPods(twin: InprocTwin, node: string): string[] {
  const pods = twin.store.list(twin.controllers.pods).filter((p) =>
    (p.spec as R).nodeName === node && !p.metadata.deletionTimestamp
  );
  const pdbs = twin.store.list(twin.controllers.pdbs);
  return pods.filter((p) =>
    pdbs.some((b) => {
      if (b.metadata.namespace !== p.metadata.namespace) return false;
      const want = ((b.spec as R).selector as R | undefined)?.matchLabels as
        | Record<string, string>
        | undefined;
      return !!want && Object.entries(want).every(([k, v]) => p.metadata.labels?.[k] === v);
    })
  ).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
}

Deno.test("a reboot-only setting: the node is cordoned and drained (a PDB-protected pod evicted, not deleted) before its reboot, comes back with the setting active, and is uncordoned", async () => {
  let protectedPods: string[] = [];
  const w = await run({
    before: (twin) => {
      protectedPods = pdbProtectedPods(twin, NODE);
      return Promise.resolve();
    },
  });
  try {
    assert(protectedPods.length > 0, "worker-1 runs a pod a PodDisruptionBudget protects");
    assertEquals(w.out.state, "completed", JSON.stringify(w.out.nodes));
    const n = w.out.nodes[0]!;
    assertEquals(n.settings?.map((s) => [s.path, s.state]), [[
      "machine.env.HTTPS_PROXY",
      "active",
    ]]);
    const op = (await w.journal.showOperation(n.operationId!))!;
    assertEquals(op.attempts.map((a) => [a.phase, a.responseClass]), [
      ["config-apply", "accepted"],
      ["cordon", "accepted"],
      ["drain", "accepted"],
      ["reboot", "accepted"],
      ["uncordon", "accepted"],
    ]);
    const at = (phase: string) => op.attempts.find((a) => a.phase === phase)!;
    // The drain was answered (every planned pod gone) before the reboot was sent.
    const planned = fact(op, "drain")["planned"] as string[];
    for (const p of protectedPods) assert(planned.includes(p), `${p} planned for eviction`);
    assert(at("drain").sentAtMs < at("reboot").sentAtMs);
    // Its attempt's transport deadline covers the whole drain bound (the apply verification
    // deadline), not the apply transport deadline of each call: no eviction leaves after it.
    assertEquals(at("drain").transportDeadlineMs - at("drain").sentAtMs, 300_000);
    const evictions = w.twin.kube.stats.byVerb["evict"] ?? 0;
    assert(evictions >= protectedPods.length, `evictions: ${evictions}`);
    assertEquals(w.twin.kube.stats.byVerb["delete"] ?? 0, 0, "no pod was deleted");
    // The node came back (a new boot observed), and the cordon lifted was cairn's own.
    assert(op.phases.some((p) => p.phase === "boot-observed" && p.kind === "fact"));
    const cordon = fact(op, "cordon");
    assertEquals([cordon["priorUnschedulable"], cordon["cordonedByOperation"]], [false, true]);
    const lifted = fact(op, "uncordon");
    assertEquals(lifted["decision"], "uncordoned");
    assert(at("uncordon").sentAtMs > op.phases.find((p) => p.phase === "boot-observed")!.atMs);
    assertEquals((await w.twin.kube.getNode(NODE))?.unschedulable, false);
    for (const p of protectedPods) {
      const [namespace, name] = p.split("/") as [string, string];
      const still = await w.twin.kube.getPod({ namespace, name });
      assert(still === undefined || still.nodeName !== NODE, `${p} left ${NODE}`);
    }
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

Deno.test("a node someone else keeps cordoned is left cordoned: the gate holds to its window, no commitment, nothing sent", async () => {
  const w = await run({
    before: async (twin) => {
      const operator = createInprocKube(twin, "kubectl-cordon");
      const node = await operator.getNode(NODE);
      assertEquals((await operator.cordon(NODE, node!.resourceVersion)).kind, "applied");
    },
  });
  try {
    const n = w.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["not-committed", "GateFailed"]);
    assertEquals(await w.journal.listOperations(), []);
    assertEquals(w.twin.talos.stats.totalMutating, 0);
    assertEquals((await w.twin.kube.getNode(NODE))?.unschedulable, true);
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

Deno.test("the gate holds: a node an operator keeps cordoned for a minute before the run is applied once it is uncordoned", async () => {
  const w = await run({
    before: async (twin) => {
      const operator = createInprocKube(twin, "kubectl-cordon");
      const node = await operator.getNode(NODE);
      assertEquals((await operator.cordon(NODE, node!.resourceVersion)).kind, "applied");
      twin.sim.schedule(60_000, () => {
        const now = twin.store.get(twin.controllers.nodes, undefined, NODE)!;
        void operator.uncordon(NODE, String(now.metadata.resourceVersion));
      });
    },
  });
  try {
    const n = w.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["completed", "CompletionObserved"]);
    const op = (await w.journal.showOperation(n.operationId!))!;
    // By the time cairn cordoned, the operator's cordon was gone: the cordon was cairn's own.
    assertEquals(fact(op, "cordon")["cordonedByOperation"], true);
    assertEquals((await w.twin.kube.getNode(NODE))?.unschedulable, false);
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

Deno.test("a node someone else cordons after the commitment is drained and rebooted but never uncordoned by cairn", async () => {
  const w = await run({
    observer: (twin) => ({
      onOperationState: (e) => {
        if (e.state !== "committed") return;
        // The operator's `kubectl cordon` (its own field manager) lands before cairn's cordon.
        const operator = createInprocKube(twin, "kubectl-cordon");
        const node = twin.store.get(twin.controllers.nodes, undefined, NODE)!;
        void operator.cordon(NODE, String(node.metadata.resourceVersion));
      },
    }),
  });
  try {
    const n = w.out.nodes[0]!;
    const op = (await w.journal.showOperation(n.operationId!))!;
    const cordon = fact(op, "cordon");
    assertEquals([cordon["priorUnschedulable"], cordon["cordonedByOperation"]], [true, false]);
    // Drained and rebooted; neither a cordon nor an uncordon was sent by cairn.
    assertEquals(op.attempts.map((a) => a.phase), ["config-apply", "drain", "reboot"]);
    assertEquals((await w.twin.kube.getNode(NODE))?.unschedulable, true);
    // With someone else's cordon on it the node cannot pass a node round: not completed.
    assertEquals([n.state, n.reason], ["unresolved", "VerificationHealthFailed"]);
    assert(n.detail.includes("the node stays cordoned"), n.detail);
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

Deno.test("a reboot the node accepted but that has not happened by the deadline (the node answers, same boot) is unresolved, never failed: the reboot may still come", async () => {
  const w = await run({
    // The node answers the reboot and keeps running the same boot past the window (a shutdown
    // that hangs on a service): the request was accepted, its effect not yet observed.
    talos: (twin) =>
      new Proxy(twin.talos, {
        get: (t, k) => {
          if (k === "reboot") {
            return () => Promise.resolve({ outcome: "ok", value: { actorId: "stuck" } });
          }
          const v: unknown = Reflect.get(t, k);
          return typeof v === "function" ? v.bind(t) : v;
        },
      }),
  });
  try {
    const n = w.out.nodes[0]!;
    const op = (await w.journal.showOperation(n.operationId!))!;
    assertEquals(op.attempts.map((a) => [a.phase, a.responseClass]), [
      ["config-apply", "accepted"],
      ["cordon", "accepted"],
      ["drain", "accepted"],
      ["reboot", "accepted"],
    ]);
    assert(!op.phases.some((p) => p.phase === "boot-observed"), "no new boot was observed");
    assertEquals([n.state, n.reason], ["unresolved", "BootNotObserved"], n.detail);
    // The scope stays held and the node stays cordoned: nothing was undone to look green.
    assertEquals((await w.twin.kube.getNode(NODE))?.unschedulable, true);
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

Deno.test("the completion observation reads the activation afresh after the post-gate: a setting reverted meanwhile is not reported active", async () => {
  const state = { reverted: false };
  const w = await run({
    // From the transition to verifying on, the node's active configuration no longer holds the
    // environment (someone applied the old document back while the post-gate ran).
    observer: () => ({
      onOperationState: (e) => {
        if (e.state === "verifying") state.reverted = true;
      },
    }),
    talos: (twin) =>
      new Proxy(twin.talos, {
        get: (t, k) => {
          const v: unknown = Reflect.get(t, k);
          if (k !== "resource" || typeof v !== "function") {
            return typeof v === "function" ? v.bind(t) : v;
          }
          return async (...a: Parameters<Talos["resource"]>) => {
            const r = await t.resource(...a);
            if (!state.reverted || a[1].type !== MACHINE_CONFIG.type || a[1].id !== "v1alpha1") {
              return r;
            }
            const doc = parse(r.yamlSpec) as { machine?: { env?: unknown } };
            delete doc.machine?.env;
            return { ...r, yamlSpec: stringify(doc) };
          };
        },
      }),
  });
  try {
    const n = w.out.nodes[0]!;
    assert(state.reverted, "the step reached verifying");
    assertEquals(n.settings?.map((s) => [s.path, s.state]), [[
      "machine.env.HTTPS_PROXY",
      "not-active",
    ]]);
    assert(n.state !== "completed", `${n.state}: ${n.detail}`);
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});

/** worker-1's address (the plan's) and a bound for the test's own Talos calls. */
const ADDRESS = "10.5.0.6";
const CALL = { timeoutMs: 10_000 };

Deno.test("a change made on the node while the gate held is kept: the document sent is built from the configuration read after the gate", async () => {
  const w = await run({
    before: async (twin) => {
      const operator = createInprocKube(twin, "kubectl-cordon");
      const node = await operator.getNode(NODE);
      assertEquals((await operator.cordon(NODE, node!.resourceVersion)).kind, "applied");
      // 30 s in, someone applies a sysctl to the node out of band; 60 s in, the cordon is lifted.
      twin.sim.schedule(30_000, () => {
        void (async () => {
          const r = await twin.talos.resource(ADDRESS, { ...MACHINE_CONFIG, id: "v1alpha1" }, CALL);
          const doc = parse(r.yamlSpec) as { machine: Record<string, unknown> };
          doc.machine["sysctls"] = { "net.core.somaxconn": "65535" };
          await twin.talos.applyConfiguration(ADDRESS, {
            data: new TextEncoder().encode(stringify(doc)),
            mode: "NO_REBOOT",
            dryRun: false,
          }, CALL);
        })();
      });
      twin.sim.schedule(60_000, () => {
        const now = twin.store.get(twin.controllers.nodes, undefined, NODE)!;
        void operator.uncordon(NODE, String(now.metadata.resourceVersion));
      });
    },
  });
  try {
    const n = w.out.nodes[0]!;
    assertEquals([n.state, n.reason], ["completed", "CompletionObserved"], n.detail);
    const r = await w.twin.talos.resource(ADDRESS, { ...MACHINE_CONFIG, id: "persistent" }, CALL);
    const doc = parse(r.yamlSpec) as { machine: Record<string, unknown> };
    assertEquals(doc.machine["sysctls"], { "net.core.somaxconn": "65535" }, "kept");
    assertEquals(
      (doc.machine["env"] as Record<string, string>)["HTTPS_PROXY"],
      "http://proxy.internal:3128",
    );
  } finally {
    w.twin.stop();
    await w.journal.close();
  }
});
