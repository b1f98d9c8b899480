/**
 * Guards of a ConfigApply pinned one by one (docs/config-apply.md): the readback never reports a
 * setting active that it did not observe active (no rule, no boot since the store, a module still
 * missing, a status that could not be read), an unreadable setting keeps the step from completing;
 * a preview that failed part-way or could not read a node's version is never a clean pass; a plan
 * whose dispatch check does not pass sends nothing.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { inprocCluster, inprocExecutionTiming } from "../../../src/app/inproc_rollout.ts";
import { classifyDiff } from "../../../src/domain/config_apply/classify.ts";
import type { ConfigChange, ConfigValue } from "../../../src/domain/config_apply/config_diff.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import {
  activationReading,
  readActivation,
  type SettingActivation,
} from "../../../src/engine/config_apply/readback.ts";
import {
  bindConfigApply,
  executeConfigApply,
} from "../../../src/engine/config_apply/run_config_apply.ts";
import { livePreviewer } from "../../../src/engine/preview/live_preview.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { CosiResourceRef, Talos } from "../../../src/ports/talos.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../../src/sim/cluster_description.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

// ---- the activation readback ---------------------------------------------------------------

const MODULES = "KernelModuleStatuses.runtime.talos.dev";

/** A node whose active configuration is `active` and whose loaded modules are `loaded`. */
function node(
  active: ConfigValue,
  loaded: readonly string[],
  unreadable: readonly string[] = [],
): Talos {
  return {
    resource: (_node: string, ref: CosiResourceRef) => {
      if (ref.type === "MachineConfigs.config.talos.dev") {
        return Promise.resolve({ ...ref, version: "7", yamlSpec: stringify(active) });
      }
      if (ref.type === MODULES) {
        if (unreadable.includes(ref.id)) {
          return Promise.reject(new Error("rpc error: code = Unavailable"));
        }
        if (!loaded.includes(ref.id)) {
          return Promise.reject(
            new CairnError({ reason: "TalosNotFound", message: `${ref.id} not found` }),
          );
        }
        return Promise.resolve({ ...ref, version: "1", yamlSpec: "{}" });
      }
      return Promise.reject(new Error(`unexpected read of ${ref.type}`));
    },
  } as unknown as Talos;
}

async function activation(
  changes: readonly ConfigChange[],
  o: { talos: Talos; target: ConfigValue; bootedAfterStore?: boolean },
): Promise<Array<[string, string]>> {
  const settings = await readActivation({
    talos: o.talos,
    address: "10.5.0.6",
    timeoutMs: 10_000,
    classification: classifyDiff(14, changes),
    target: o.target,
    bootedAfterStore: o.bootedAfterStore ?? false,
  });
  return settings.map((s) => [s.path, s.state]);
}

const ENV = { machine: { env: { HTTPS_PROXY: "http://proxy:3128" } } };

Deno.test("a setting that takes effect at boot is not active without a boot after the store, even when the active document holds it", async () => {
  const changes: ConfigChange[] = [{ path: "machine.env", change: "modified" }];
  assertEquals(await activation(changes, { talos: node(ENV, []), target: ENV }), [
    ["machine.env", "not-active"],
  ]);
  assertEquals(
    await activation(changes, { talos: node(ENV, []), target: ENV, bootedAfterStore: true }),
    [["machine.env", "active"]],
  );
});

Deno.test("a setting no activation rule covers is never reported active", async () => {
  assertEquals(
    await activation([{ path: "machine.sysctls", change: "added" }], {
      talos: node({}, []),
      target: { machine: { sysctls: { "net.core.somaxconn": "65535" } } },
    }),
    [["machine.sysctls", "unreadable"]],
  );
});

Deno.test("added kernel modules are active only when every one is listed, and unreadable when one cannot be read", async () => {
  const added: ConfigChange[] = [{
    path: "machine.kernel.modules",
    change: "modified",
    modules: { added: ["nvme_tcp", "drbd"], removed: [], changed: [] },
  }];
  const target = { machine: { kernel: { modules: [{ name: "nvme_tcp" }, { name: "drbd" }] } } };
  const states = async (loaded: string[], unreadable: string[] = []) =>
    (await activation(added, { talos: node({}, loaded, unreadable), target })).map(([, s]) => s);
  assertEquals(await states(["nvme_tcp", "drbd"]), ["active"]);
  assertEquals(await states(["nvme_tcp"]), ["not-active"]);
  assertEquals(await states([]), ["not-active"]);
  assertEquals(await states(["drbd"], ["nvme_tcp"]), ["unreadable"]);
});

Deno.test("a setting whose activation could not be read keeps the step from completing", () => {
  const s = (state: SettingActivation["state"]): SettingActivation => ({
    path: "machine.time.servers",
    class: "immediate",
    state,
    basis: "",
  });
  assertEquals(activationReading(true, [s("active")]), "established");
  assertEquals(activationReading(true, [s("active"), s("unreadable")]), "unreadable");
  assertEquals(activationReading(true, [s("unreadable")]), "unreadable");
  assertEquals(activationReading(undefined, [s("active")]), "unreadable");
});

// ---- preview and dispatch ------------------------------------------------------------------

const PLAN_PATH = join(ROOT, "plans/config-apply-ntp.yaml");
const PATCH_PATH = "talos/home-ops/ntp-patch.yaml";
const POLICY_PATH = "policies/home-ops.yaml";

async function description(): Promise<ClusterDescription> {
  return ClusterDescriptionSchema.parse(
    parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
}

/** The repository's files, with `path` read through `serve`. */
function filesWith(
  path: string,
  serve: (real: BoundFileSource) => ReturnType<BoundFileSource["read"]>,
): BoundFileSource {
  const repo = workingTreeBoundFiles(PLAN_PATH);
  return { describe: () => repo.describe(), read: (p) => p === path ? serve(repo) : repo.read(p) };
}

async function preview(o: { faults?: Fault[]; files?: BoundFileSource } = {}) {
  const twin = startInprocTwin({
    description: await description(),
    ...(o.faults ? { faults: o.faults } : {}),
  });
  const text = onlyNodes("worker-1", "cp-1")(await Deno.readTextFile(PLAN_PATH));
  const parsed = await parsePlan(new TextEncoder().encode(text), { file: PLAN_PATH });
  const live = await livePreviewer({
    cluster: { kube: twin.kube, talos: twin.talos },
    clock: twin.timeoutClock,
  }).preview(parsed, o.files ?? workingTreeBoundFiles(PLAN_PATH));
  return { twin, live };
}

Deno.test("a preview that fails part-way holds the plan: never a clean preview", async () => {
  const { twin, live } = await preview({
    files: filesWith(PATCH_PATH, () => Promise.reject(new Error("git object store unreadable"))),
  });
  try {
    assert(live.held, JSON.stringify(live.reasons));
    const failed = live.reasons.filter((r) => r.reason === "NodeUnreadable");
    assertEquals(failed.length, 1);
    assert(failed[0]!.message.includes("git object store unreadable"), failed[0]!.message);
    assertEquals(twin.talos.stats.totalMutating, 0);
  } finally {
    twin.stop();
  }
});

Deno.test("a node whose Talos version cannot be read leaves row 19 unreadable, never a pass", async () => {
  const { twin, live } = await preview({
    faults: [{ kind: "unavailable", point: "talos.Version", target: "cp-1", count: 1000 }],
  });
  try {
    assert(live.held, JSON.stringify(live.reasons));
    assertEquals(
      live.reasons.filter((r) => r.reason === "NodeUnreadable").map((r) => r.where),
      ["cp-1"],
    );
    assertEquals(
      live.safeguards.find((s) => s.id === "ClientMatchesServer")?.verdict,
      "unreadable",
    );
  } finally {
    twin.stop();
  }
});

Deno.test("a ConfigApply whose dispatch check does not pass sends nothing", async () => {
  const twin = startInprocTwin({ description: await description() });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds(),
    nowMs: twin.clock.now(),
  });
  try {
    const bytes = new TextEncoder().encode(
      onlyNodes("worker-1")(await Deno.readTextFile(PLAN_PATH)),
    );
    const parsed = await parsePlan(bytes, { file: PLAN_PATH });
    const bound = await bindConfigApply(journal, {
      parsed,
      bytes,
      signatures: "",
      firstSeenCommit: "test",
      approver: { identity: "test", role: "approver" },
      nowMs: twin.clock.now(),
    });
    // The bound health policy was edited after the approval: its digest no longer matches.
    const files = filesWith(POLICY_PATH, async (real) => {
      const r = await real.read(POLICY_PATH);
      if (r.status !== "read") return r;
      const text = new TextDecoder().decode(r.bytes) + "# edited after the approval\n";
      return { status: "read", bytes: new TextEncoder().encode(text) };
    });
    const out = await executeConfigApply({
      journal,
      bound,
      cluster: inprocCluster(twin),
      authority: { bytes, signatures: "", requiredApprovals: 1, files },
      ...inprocExecutionTiming(twin),
      log: new MemoryLogger(),
      owner: "ctl_test",
    });
    assertEquals(out.state, "refused");
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [["worker-1", "not-committed"]]);
    assertEquals(await journal.listOperations(), []);
    assertEquals(twin.talos.stats.totalMutating + twin.kube.stats.mutating, 0);
  } finally {
    twin.stop();
    await journal.close();
  }
});
