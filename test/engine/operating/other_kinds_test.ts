/**
 * Windows, breakpoints and node hooks hold KubernetesUpgrade and ConfigApply commitments as they
 * hold a TalosUpgrade's (docs/operating.md), on the in-process twin and virtual time: the shared
 * step loop waits before each new commitment, the shared commitment path runs the pre hooks before
 * anything is sent and the post hooks a step owes before it is classified.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import {
  counterIdSource,
  inprocCluster,
  inprocExecutionTiming,
} from "../../../src/app/inproc_rollout.ts";
import { rehearsalReport } from "../../../src/app/rehearsal_report.ts";
import {
  CONTINUATION_NAMESPACE,
  continuationPath,
  continuationText,
} from "../../../src/domain/ops/continuation.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { OperatedPlan } from "../../../src/domain/plan/schema.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import {
  bindConfigApply,
  executeConfigApply,
} from "../../../src/engine/config_apply/run_config_apply.ts";
import type { ExecutionObserver } from "../../../src/engine/executor/deps.ts";
import type { AuthorityInputs } from "../../../src/engine/executor/run_plan.ts";
import type { RolloutOutcome } from "../../../src/engine/executor/rollout.ts";
import { breakpointBefore } from "../../../src/engine/operating/breakpoint.ts";
import type { OperatingSettings } from "../../../src/engine/operating/hold.ts";
import { JOBS } from "../../../src/engine/operating/hooks.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { Talos as TalosPort } from "../../../src/ports/talos.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { k8sPlan, k8sRollout } from "../../_helpers/k8s_world.ts";
import { componentSteps } from "../../../src/engine/k8s_upgrade/step.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const CONFIG_PLAN = `${ROOT}/plans/config-apply-ntp.yaml`;
const IMAGE = "quay.io/ceph/ceph:v19@sha256:" + "a".repeat(64);
const HOOKS = `  hooks:
    - name: ceph-noout
      namespace: rook-ceph
      image: ${IMAGE}
      timeoutSeconds: 300
      pre:
        command: [ceph, osd, set, noout]
      post:
        command: [ceph, osd, unset, noout]
`;

/** The shipped ConfigApply example, edited, bound in a `:memory:` journal against the twin. */
async function configWorld(o: {
  planEdit?: (t: string) => string;
  faults?: Fault[];
  authority?: Partial<AuthorityInputs>;
  operating?: OperatingSettings;
  /** Wraps the twin's Talos port (a refusal the twin does not model). */
  talos?: (t: TalosPort) => TalosPort;
}) {
  const twin = startInprocTwin({
    description: await homeOps(),
    ...(o.faults ? { faults: o.faults } : {}),
  });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIdSource(),
    nowMs: twin.clock.now(),
  });
  const text = (o.planEdit ?? ((t) => t))(await Deno.readTextFile(CONFIG_PLAN));
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: CONFIG_PLAN });
  const bound = await bindConfigApply(journal, {
    parsed,
    bytes,
    signatures: o.authority?.signatures ?? "",
    firstSeenCommit: "test",
    approver: { identity: "test", role: "approver" },
    nowMs: twin.clock.now(),
  });
  const run = (r: { observer?: ExecutionObserver } = {}) =>
    executeConfigApply({
      journal,
      bound,
      cluster: o.talos
        ? { ...inprocCluster(twin), talos: o.talos(inprocCluster(twin).talos) }
        : inprocCluster(twin),
      authority: {
        bytes,
        signatures: "",
        requiredApprovals: 1,
        files: workingTreeBoundFiles(CONFIG_PLAN),
        ...o.authority,
      },
      ...inprocExecutionTiming(twin),
      log: new MemoryLogger(),
      owner: "ctl_test",
      ...(o.operating ? { operating: o.operating } : {}),
      ...(r.observer ? { observer: r.observer } : {}),
    });
  return {
    twin,
    journal,
    bound,
    parsed,
    run,
    async close() {
      twin.stop();
      await journal.close();
    },
  };
}

async function report(
  journal: Journal,
  planBytes: string,
  file: string,
  outcome: RolloutOutcome,
  atMs: number,
): Promise<string> {
  const parsed = await parsePlan(new TextEncoder().encode(planBytes), { file });
  return rehearsalReport({
    journal,
    parsed,
    planPath: file,
    requiredApprovals: 1,
    outcome,
    generatedAt: atMs,
  });
}

async function events(journal: Journal, digest: string) {
  return ((await journal.planHistory(digest))?.rolloutEvents ?? []).map((e) => ({
    kind: e.kind,
    node: e.node,
    reason: e.detail["reason"] ?? e.detail["after"],
    atMs: e.atMs,
  }));
}

function hookFacts(phases: ReadonlyArray<{ phase: string; kind: string; detail: string }>) {
  return phases.filter((p) => p.kind === "fact" && p.phase.endsWith("-hook"))
    .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
    .map((d) => [d["stage"], d["hook"], d["outcome"]]);
}

// The twin starts at 2026-12-01T09:00Z and a component step takes about 35 virtual seconds. A
// 10-minute window from 09:00 UTC with 5-minute steps admits commitments until 09:05 only, so the
// rollout holds partway through and goes on the next day.
const K8S_WINDOW = `  expectedStepMinutes: 5
  windows:
    - start: "0 9 * * *"
      durationMinutes: 10
      timeZone: UTC
`;

Deno.test("a KubernetesUpgrade reaching a closing window holds before the next commitment and resumes in the next window; the hold is in the report", async () => {
  const edit = (t: string) => t + K8S_WINDOW;
  const w = await k8sRollout({ planEdit: edit });
  try {
    const holds: string[] = [];
    const out = await w.run({ observer: { onHold: (h) => holds.push(`${h.node}:${h.reason}`) } });
    assertEquals(out.state, "completed", JSON.stringify(out.nodes.at(-1)));
    const ops = (await w.journal.listOperations()).sort((a, b) => a.createdAtMs - b.createdAtMs);
    const { plan, bytes } = await k8sPlan(edit);
    assertEquals(ops.length, componentSteps(plan).length);
    // The steps that fit in the first window, nothing between, the rest from the next one on.
    const next = ops.findIndex((o) => o.createdAtMs >= Date.parse("2026-12-02T09:00:00Z"));
    assert(next > 0, "the rollout went on into the next day's window");
    assert(ops.slice(0, next).every((o) => o.createdAtMs < Date.parse("2026-12-01T09:05:00Z")));
    assertEquals(ops[next]!.createdAtMs, Date.parse("2026-12-02T09:00:00Z"));
    const held = ops[next]!.machine;
    assertEquals(holds, [`${held}:MaintenanceWindowTooShort`]);
    const evs = await events(w.journal, w.bound.digest);
    assertEquals(evs.map((e) => [e.kind, e.node, e.reason]), [
      ["hold", held, "MaintenanceWindowTooShort"],
      ["resume", held, "MaintenanceWindowTooShort"],
    ]);
    assert(evs[0]!.atMs < Date.parse("2026-12-01T09:06:00Z"));
    const md = await report(
      w.journal,
      new TextDecoder().decode(bytes),
      "plans/kubernetes-v1.36.0-talos-v1.13.9.yaml",
      out,
      w.twin.clock.now(),
    );
    assert(md.includes("## Holds and events beside the steps"), md);
    assert(
      new RegExp(
        `\\| \`${held}\` \\| \\*\\*hold\\*\\* \\| \`MaintenanceWindowTooShort\` \\| ` +
          ".*next window 2026-12-02T09:00:00\\.000Z",
      ).test(md),
      md,
    );
  } finally {
    await w.close();
  }
});

Deno.test("a ConfigApply outside every window commits nothing until one opens", async () => {
  const w = await configWorld({
    planEdit: (t) =>
      onlyNodes("worker-1")(t) + `  windows:
    - start: "30 22 * * *"
      durationMinutes: 240
      timeZone: Europe/Berlin
`,
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "completed", JSON.stringify(out.nodes));
    const [op] = await w.journal.listOperations();
    // 22:30 in Berlin (CET) is 21:30Z; the node was reached only then.
    assertEquals(new Date(op!.createdAtMs).toISOString().slice(0, 16), "2026-12-01T21:30");
    assertEquals((await events(w.journal, w.bound.digest)).map((e) => [e.kind, e.reason]), [
      ["hold", "MaintenanceWindowClosed"],
      ["resume", "MaintenanceWindowClosed"],
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("a ConfigApply breakpoint holds until a continuation for this digest, signed by the trust root, arrives through git", async () => {
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const mallory = await nativeSigner("mallory@example.com");
  const breakpoint = "  breakpoints:\n    - name: after-first\n      after: worker-1\n";
  const edit = (t: string) => onlyNodes("worker-1", "worker-2")(t) + breakpoint;
  const bytes = new TextEncoder().encode(edit(await Deno.readTextFile(CONFIG_PLAN)));
  const signatures = (await alice.sign(bytes)) + (await bob.sign(bytes));
  const repo = new Map<string, Uint8Array>();
  const real = workingTreeBoundFiles(CONFIG_PLAN);
  const files: BoundFileSource = {
    describe: () => "main at test",
    read: (path) => {
      const b = repo.get(path);
      return b ? Promise.resolve({ status: "read", bytes: b }) : real.read(path);
    },
  };
  const signers = [alice, bob].map((p) => p.allowedSignersLine).join("\n");
  const w = await configWorld({
    planEdit: edit,
    authority: {
      files,
      signatures,
      trust: { load: () => Promise.resolve(parseAllowedSigners(signers, "allowed_signers")) },
    },
  });
  try {
    const path = continuationPath("config-apply-ntp", "after-first");
    const text = new TextEncoder().encode(continuationText(w.bound.digest, "after-first"));
    const byMallory = await mallory.sign(text, CONTINUATION_NAMESPACE);
    const byBob = await bob.sign(text, CONTINUATION_NAMESPACE);
    const holds: string[] = [];
    const out = await w.run({
      observer: {
        onHold: (h) => {
          holds.push(h.reason);
          const enc = new TextEncoder();
          // Nothing reached worker-2 while it waits: one operation, on worker-1.
          assertEquals(w.twin.talos.stats.totalMutating, 1);
          repo.set(path, text);
          // First a signer the trust root does not know, then bob.
          repo.set(`${path}.sig`, enc.encode(holds.length === 1 ? byMallory : byBob));
        },
      },
    });
    assertEquals(out.state, "completed", JSON.stringify(out.nodes));
    assertEquals(holds, ["BreakpointHeld", "ContinuationInvalid"]);
    const evs = await events(w.journal, w.bound.digest);
    assertEquals(evs.map((e) => [e.kind, e.node]), [
      ["hold", "worker-2"],
      ["hold", "worker-2"],
      ["resume", "worker-2"],
    ]);
    const ops = (await w.journal.listOperations()).sort((a, b) => a.createdAtMs - b.createdAtMs);
    assertEquals(ops.map((o) => o.machine), ["worker-1", "worker-2"]);
    assert(ops[1]!.createdAtMs >= evs[2]!.atMs, "worker-2 committed only after the resume");
  } finally {
    await w.close();
  }
});

Deno.test("a ConfigApply pre hook that fails holds the node before anything is sent; its post hook still runs; the report shows both", async () => {
  const edit = (t: string) => onlyNodes("worker-1", "worker-2")(t) + HOOKS;
  const w = await configWorld({
    planEdit: edit,
    faults: [{ kind: "job-fails", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "HookFailed"],
    ]);
    const [op] = await w.journal.listOperations();
    const shown = (await w.journal.showOperation(op!.id))!;
    // The two hook Jobs and nothing else: no configuration reached the node.
    assertEquals(shown.attempts.map((a) => [a.phase, a.responseClass]), [
      ["pre-hook", "accepted"],
      ["post-hook", "accepted"],
    ]);
    assertEquals(w.twin.talos.stats.totalMutating, 0);
    assertEquals(hookFacts(shown.phases), [
      ["pre", "ceph-noout", "failed"],
      ["post", "ceph-noout", "succeeded"],
    ]);
    assertEquals(shown.operation.state, "unresolved");
    const md = await report(
      w.journal,
      edit(await Deno.readTextFile(CONFIG_PLAN)),
      "plans/config-apply-ntp.yaml",
      out,
      w.twin.clock.now(),
    );
    assert(md.includes("## Node hooks"), md);
    assert(/`worker-1`.*pre.*ceph-noout.*failed/.test(md), md);
    assert(/`worker-1`.*post.*ceph-noout.*succeeded/.test(md), md);
  } finally {
    await w.close();
  }
});

/** The machine refuses every ApplyConfiguration by validation (InvalidArgument) before acting. */
function refusesConfig(t: TalosPort): TalosPort {
  return new Proxy(t, {
    get(target, prop) {
      if (prop !== "applyConfiguration") {
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      }
      return (node: string) =>
        Promise.resolve({
          outcome: "rejected" as const,
          reason: "TalosInvalidArgument" as const,
          grpcCode: 3,
          message: "configuration validation failed: 1 error occurred: * unknown keys found",
          node,
          method: "/machine.MachineService/ApplyConfiguration",
        });
    },
  });
}

Deno.test("a ConfigApply the machine refuses by validation is rejected, with node hooks as without; the hooks ran around it", async () => {
  for (const hooks of ["", HOOKS]) {
    const edit = (t: string) => onlyNodes("worker-1", "worker-2")(t) + hooks;
    const w = await configWorld({ planEdit: edit, talos: refusesConfig });
    try {
      const out = await w.run();
      assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
        ["worker-1", "rejected", "ConfigApplyRejected"],
      ], `hooks: ${hooks !== ""}`);
      const [op] = await w.journal.listOperations();
      const shown = (await w.journal.showOperation(op!.id))!;
      assertEquals(shown.operation.state, "rejected");
      // The machine was asked once and refused before changing anything; the hook's Job create
      // is answered (not a request to the machine), so it does not keep the operation open.
      assertEquals(
        shown.attempts.map((a) => [a.phase, a.responseClass]),
        hooks
          ? [["pre-hook", "accepted"], ["config-apply", "rejected-pre-mutation"]]
          : [["config-apply", "rejected-pre-mutation"]],
      );
      assertEquals(w.twin.talos.stats.totalMutating, 0);
      if (hooks) {
        // The post hook went out after the rejection, as an owed hook: `unset noout` follows.
        assertEquals(hookFacts(shown.phases), [["pre", "ceph-noout", "succeeded"]]);
        assertEquals(
          (await w.journal.hookObligations([op!.id])).map((o) => [o.hook, o.state, o.outcome]),
          [["ceph-noout", "discharged", "succeeded"]],
        );
        const jobs = await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" });
        assertEquals(jobs.items.map((j) => String(j.metadata?.name).includes("-post-")).sort(), [
          false,
          true,
        ]);
      }
    } finally {
      await w.close();
    }
  }
});

// A second hook: four Job creates per step on top of its own mutations. A KubernetesUpgrade step
// then takes six attempts, more than its pull, its change and the example's retry allowance of
// three: the hooks' Job creates are budgeted on top (domain/ops/hook_attempts.ts).
const TWO_HOOKS = HOOKS + `    - name: detach-loops
      namespace: kube-system
      image: ${IMAGE}
      timeoutSeconds: 120
      pre:
        command: [losetup, -D]
      post:
        command: ["true"]
`;

Deno.test("ConfigApply hooks run around each node: pre hooks before the apply, post hooks after it in reverse", async () => {
  const w = await configWorld({
    planEdit: (t) =>
      onlyNodes("worker-1", "worker-2")(t).replace("maxAttempts: 2", "maxAttempts: 1") +
      TWO_HOOKS,
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "completed", JSON.stringify(out.nodes));
    for (const op of await w.journal.listOperations()) {
      const shown = (await w.journal.showOperation(op.id))!;
      assertEquals(shown.attempts.map((a) => [a.phase, a.responseClass]), [
        ["pre-hook", "accepted"],
        ["pre-hook", "accepted"],
        ["config-apply", "accepted"],
        ["post-hook", "accepted"],
        ["post-hook", "accepted"],
      ]);
      assertEquals(hookFacts(shown.phases).map((f) => f.slice(0, 2)), [
        ["pre", "ceph-noout"],
        ["pre", "detach-loops"],
        ["post", "detach-loops"],
        ["post", "ceph-noout"],
      ]);
      assertEquals(shown.operation.state, "completed");
    }
    const jobs = await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" });
    assertEquals(jobs.items.length, 4);
  } finally {
    await w.close();
  }
});

Deno.test("KubernetesUpgrade hooks run around every component step; a failing post hook holds the step before it verifies", async () => {
  // Two hooks: four Job creates per step beyond its own mutations, all within its budget.
  const ok = await k8sRollout({ planEdit: (t) => t + TWO_HOOKS });
  try {
    const out = await ok.run();
    assertEquals(out.state, "completed", JSON.stringify(out.nodes.at(-1)));
    for (const op of await ok.journal.listOperations()) {
      const shown = (await ok.journal.showOperation(op.id))!;
      // The hooks around the step's own mutations (a pull and the change; kube-proxy has its own).
      const phases = shown.attempts.map((a) => a.phase);
      assertEquals(phases.slice(0, 2), ["pre-hook", "pre-hook"]);
      assertEquals(phases.slice(-2), ["post-hook", "post-hook"]);
      assert(phases.includes("component-config"), phases.join());
      assertEquals(phases.filter((p) => p.endsWith("-hook")).length, 4, phases.join());
    }
  } finally {
    await ok.close();
  }
  // A pre hook whose Job fails: nothing reaches the node, the post hook still runs.
  const pre = await k8sRollout({
    planEdit: (t) => t + HOOKS,
    faults: [{ kind: "job-fails", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const out = await pre.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "unresolved", "HookFailed"],
    ]);
    const [op] = await pre.journal.listOperations();
    const shown = (await pre.journal.showOperation(op!.id))!;
    assertEquals(shown.attempts.map((a) => a.phase), ["pre-hook", "post-hook"]);
    assertEquals(pre.twin.talos.stats.totalMutating, 0);
  } finally {
    await pre.close();
  }
  // A post-only hook whose Job fails: the first step's component was changed and observed, but
  // the step holds unresolved instead of completing, and the rollout stops there.
  const postOnly = HOOKS.replace(/ {6}pre:\n {8}command: \[ceph, osd, set, noout\]\n/, "");
  const w = await k8sRollout({
    planEdit: (t) => t + postOnly,
    faults: [{ kind: "job-fails", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "unresolved", "HookFailed"],
    ]);
    const [op] = await w.journal.listOperations();
    const shown = (await w.journal.showOperation(op!.id))!;
    assertEquals(shown.attempts.map((a) => a.phase), ["pull", "component-config", "post-hook"]);
    assertEquals(hookFacts(shown.phases), [["post", "ceph-noout", "failed"]]);
  } finally {
    await w.close();
  }
});

Deno.test("a breakpoint stands before the first step on another node after a step on its node, for every kind", () => {
  const plan = {
    kind: "KubernetesUpgrade",
    spec: { breakpoints: [{ name: "canary", after: "cp-1" }] },
  } as unknown as OperatedPlan;
  assertEquals(breakpointBefore(plan, undefined, "cp-1"), undefined);
  // cp-1's own next step is not a crossing; leaving cp-1 is.
  assertEquals(breakpointBefore(plan, "cp-1", "cp-1"), undefined);
  assertEquals(breakpointBefore(plan, "cp-1", "cp-2")?.name, "canary");
  assertEquals(breakpointBefore(plan, "cp-2", "cp-3"), undefined);
});
