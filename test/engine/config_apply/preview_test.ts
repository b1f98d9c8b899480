/**
 * The ConfigApply preview writes nothing: it reads each node's version and machine configuration
 * through the read-only guard, lists every changed setting with its class, judges row 19 from the
 * running versions, and the report's verdict follows its rows (Talos-image and Kubernetes rows
 * not applicable, none of them shown as a pass).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import { livePreviewer } from "../../../src/engine/preview/live_preview.ts";
import { previewModel } from "../../../src/report/reconcile_reports.ts";
import { preview as planPreview } from "../../../src/app/preview_run.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../../src/sim/cluster_description.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

const PLAN_PATH = join(ROOT, "plans/config-apply-ntp.yaml");

async function preview(
  o: { nodeTalos?: string; stagePending?: string; talosRoles?: string[] } = {},
) {
  const desc: ClusterDescription = ClusterDescriptionSchema.parse(
    parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
  if (o.nodeTalos) { for (const n of desc.spec.nodes) n.talosVersion = o.nodeTalos; }
  const twin = startInprocTwin({
    description: desc,
    ...(o.talosRoles ? { talosRoles: o.talosRoles } : {}),
  });
  if (o.stagePending) twin.cluster.nodes.get(o.stagePending)!.machineConfig.stage("machine: {}\n");
  const text = onlyNodes("worker-1", "cp-1")(await Deno.readTextFile(PLAN_PATH));
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: PLAN_PATH });
  const live = await livePreviewer({
    cluster: { kube: twin.kube, talos: twin.talos },
    clock: twin.timeoutClock,
  }).preview(parsed, workingTreeBoundFiles(PLAN_PATH));
  return { twin, parsed, live };
}

Deno.test("preview of the example plan: 0 writes, the time-server change listed as immediate", async () => {
  const { twin, parsed, live } = await preview();
  try {
    assertEquals(twin.talos.stats.totalMutating + twin.kube.stats.mutating, 0);
    assertEquals(live.writes, { count: 0, refused: [] });
    assertEquals(live.refused, false, JSON.stringify(live.reasons));
    const checks = live.checks.filter((c) => c.name.startsWith("configuration change"));
    assertEquals(checks.map((c) => [c.name, c.verdict]), [
      ["configuration change on worker-1", "pass"],
      ["configuration change on cp-1", "pass"],
    ]);
    assert(
      checks[0]!.detail.startsWith("immediate: machine.time.servers → immediate"),
      checks[0]!.detail,
    );
    assert(!checks[0]!.detail.includes("pool.ntp.org"), "values are never shown");
    const rows = new Map(live.safeguards.map((s) => [s.id, s]));
    assertEquals(rows.get("ClientMatchesServer")?.verdict, "pass");
    assertEquals(rows.get("NodeIdentityBound")?.verdict, "pass");
    // The report: the Talos-image and Kubernetes rows are not applicable, never passed.
    const model = previewModel({
      facts: {
        name: parsed.plan.metadata.name,
        path: "plans/config-apply-ntp.yaml",
        branch: "change",
        commit: "0".repeat(40),
        digest: parsed.sha256,
        plan: parsed.plan,
        problems: [],
        requiredApprovals: 1,
        refusals: [],
      },
      verdict: "ready",
      generatedAt: twin.clock.now(),
      live,
    });
    const byId = new Map<string, { verdict: string }>(model.safeguards.map((s) => [s.id, s]));
    for (
      const id of [
        "SchematicPreserved",
        "InstallerImageExists",
        "InstallerDigestResolved",
        "KubernetesAfterUniformOs",
        "DryRunWithoutPrePull",
      ]
    ) assertEquals(byId.get(id)?.verdict, "not-applicable", id);
    assertEquals(byId.get("PreviewReadOnly")?.verdict, "pass");
    assertEquals(byId.get("ClientMatchesServer")?.verdict, "pass");
    // The verdict follows the rows: no gap among the rows this kind can pass, and a gap (rows
    // without a reader, e.g. 17 and 18) keeps it from READY.
    const gaps = [...model.gaps.failed, ...model.gaps.unevaluated].map((g) => String(g.id));
    for (const id of ["ClientMatchesServer", "PreviewReadOnly", "NodeIdentityBound"]) {
      assert(!gaps.includes(id), `${id} is a gap: ${gaps.join(", ")}`);
    }
    assertEquals(model.verdict === "ready", gaps.length === 0);
    assertEquals(model.gaps.failed, []);
  } finally {
    twin.stop();
  }
});

Deno.test("preview on nodes that run another version: row 19 fails, still 0 writes", async () => {
  const { twin, live } = await preview({ nodeTalos: "v1.14.2" });
  try {
    assertEquals(twin.talos.stats.totalMutating, 0);
    assert(live.refused);
    assert(live.reasons.some((r) => r.reason === "NodeVersionUnexpected"));
    assertEquals(
      live.safeguards.find((s) => s.id === "ClientMatchesServer")?.verdict,
      "fail",
    );
  } finally {
    twin.stop();
  }
});

Deno.test("preview refuses a node with a staged change pending", async () => {
  const { twin, live } = await preview({ stagePending: "cp-1" });
  try {
    assert(live.refused);
    assertEquals(
      live.reasons.filter((r) => r.reason === "ConfigStagedPending").map((r) => r.where),
      [
        "cp-1",
      ],
    );
    assertEquals(twin.talos.stats.totalMutating, 0);
  } finally {
    twin.stop();
  }
});

Deno.test("cairn plan preview's model takes a ConfigApply (no PlanKindNotExecutable) and writes nothing", async () => {
  const { twin, parsed } = await preview();
  try {
    const model = await planPreview({
      parsed,
      file: "plans/config-apply-ntp.yaml",
      problems: [],
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.timeoutClock,
      files: workingTreeBoundFiles(PLAN_PATH),
    });
    assertEquals(model.writes.count, 0);
    assertEquals(
      model.safeguards.find((s) => s.id === "ClientMatchesServer")?.verdict,
      "pass",
    );
    assertEquals(twin.talos.stats.totalMutating, 0);
  } finally {
    twin.stop();
  }
});

Deno.test("a reader-only Talos credential cannot read MachineConfigs (Sensitive): the preview holds", async () => {
  const { twin, live } = await preview({ talosRoles: ["os:reader"] });
  try {
    assert(live.held, JSON.stringify(live.reasons));
    const notes = live.reasons.filter((r) => r.reason === "ConfigUnreadable");
    assertEquals(notes.map((r) => r.where), ["worker-1", "cp-1"]);
    assert(notes[0]!.message.includes("TalosPermissionDenied"), notes[0]!.message);
    // Unread is never a pass and never a refusal.
    assertEquals(live.safeguards.find((s) => s.id === "ClientMatchesServer")?.verdict, "pass");
    assertEquals(twin.talos.stats.totalMutating, 0);
  } finally {
    twin.stop();
  }
});
