/** The preview shows reviewers what a plan does beside its node steps. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import { previewModel } from "../../src/report/reconcile_reports.ts";
import { renderPreviewReport } from "../../src/report/render_preview.ts";

const PLAN = new URL("../../plans/talos-v1.14.2.yaml", import.meta.url);

Deno.test("the preview lists the next window, expected step, breakpoints, hooks and expected noise", async () => {
  const text = (await Deno.readTextFile(PLAN)) + `  expectedStepMinutes: 40
  windows:
    - start: "0 2 * * 6"
      durationMinutes: 240
      timeZone: Europe/Berlin
  breakpoints:
    - name: after-workers
      after: worker-3
  hooks:
    - name: ceph-noout
      namespace: rook-ceph
      image: quay.io/ceph/ceph:v19@sha256:${"b".repeat(64)}
      timeoutSeconds: 300
      pre: { command: [ceph, osd, set, noout] }
      post: { command: [ceph, osd, unset, noout] }
  expectedNoise:
    - name: ceph-osd-down
      matchers:
        - { name: alertname, value: CephOSDDownHigh }
`;
  const parsed = await parsePlan(new TextEncoder().encode(text), { file: "p.yaml" });
  const model = previewModel({
    facts: {
      name: parsed.plan.metadata.name,
      path: "plans/talos-v1.14.2.yaml",
      branch: "change",
      commit: "0".repeat(40),
      digest: parsed.sha256,
      plan: parsed.plan,
      problems: [],
      requiredApprovals: 1,
      refusals: [],
    },
    verdict: "ready",
    // Tuesday 2026-12-01 10:00Z: the next Saturday 02:00 in Berlin is 2026-12-05T01:00Z.
    generatedAt: Date.parse("2026-12-01T10:00:00Z"),
  });
  assertEquals(model.operating?.window, {
    state: "next",
    opensAtMs: Date.parse("2026-12-05T01:00:00Z"),
    closesAtMs: Date.parse("2026-12-05T05:00:00Z"),
  });
  const md = renderPreviewReport(model);
  for (
    const line of [
      "## Operating beside the cluster",
      "**Maintenance window:** next opens 2026-12-05T01:00:00Z, closes 2026-12-05T05:00:00Z.",
      "- Expected node step: 40 minutes (the window must have this left).",
      "  - after-workers: after worker-3",
      "; pre: ceph osd set noout; post: ceph osd unset noout",
      "  - ceph-osd-down: alertname=CephOSDDownHigh, node=&lt;node&gt;",
    ]
  ) assert(md.includes(line), `${line}\n---\n${md}`);
});
