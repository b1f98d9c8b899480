import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { readBoundEvidence } from "../../src/app/evidence_run.ts";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { evidenceRefusal } from "../../src/engine/reconcile/bound_evidence.ts";
import { previewVerdict } from "../../src/engine/reconcile/reconciler.ts";
import type { LiveFindings, PlanFacts } from "../../src/ports/reconcile.ts";
import { previewModel, reconcileReports } from "../../src/report/reconcile_reports.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const MANIFEST = "evidence/upgrade-order.yaml";

async function facts(): Promise<PlanFacts> {
  const bytes = await Deno.readFile(join(ROOT, "plans/talos-v1.14.2.yaml"));
  const parsed = await parsePlan(bytes, { file: "plans/talos-v1.14.2.yaml" });
  return {
    name: "talos-v1.14.2",
    path: "plans/talos-v1.14.2.yaml",
    branch: "plan/x",
    commit: "c0ffee",
    digest: parsed.sha256,
    plan: parsed.plan,
    problems: [],
    requiredApprovals: 1,
    refusals: [],
  };
}

const LIVE: LiveFindings = {
  reasons: [],
  checks: [{ name: "drain planning worker-1", verdict: "pass", detail: "drain plan ok" }],
  safeguards: [
    { id: "DisruptionBudgetsAudited", verdict: "pass", evidence: "0 refused" },
    { id: "NotASafeguard", verdict: "pass", evidence: "ignored" },
  ],
  healthRounds: [{ startedAt: 1, endedAt: 2, verdict: "pass", results: [] }],
  held: false,
  refused: false,
  reads: "reads only",
  writes: { count: 0, refused: [] },
};

Deno.test("previewModel() without a reading keeps the honest unread placeholder for a bound manifest", async () => {
  const f = await facts();
  const m = previewModel({ facts: f, verdict: previewVerdict(f), generatedAt: 0 });
  assertEquals(m.sourceChecks.map((c) => [c.path, c.verdict]), [[MANIFEST, "unreadable"]]);
  assertEquals(m.healthRounds, []);
});

Deno.test("previewModel() lists the reading's rows and the live findings; unread evidence holds the preview", async () => {
  const bytes = await Deno.readFile(join(ROOT, MANIFEST));
  const empty = await Deno.makeTempDir();
  try {
    const reading = await readBoundEvidence(
      { path: MANIFEST, sha256: await sha256Hex(bytes), bytes },
      empty,
    );
    const f = { ...(await facts()), evidence: reading };
    const verdict = previewVerdict(f, LIVE);
    assertEquals(verdict, "held", "an empty cache never reads as ready");
    const m = previewModel({ facts: f, verdict, generatedAt: 0, live: LIVE });
    assertEquals(m.sourceChecks.length, 3);
    assert(m.sourceChecks.every((c) => c.verdict === "unreadable"));
    assertEquals(m.assertions[0]!.name, "drain planning worker-1");
    assertEquals(m.assertions.length, 1 + 5 + 2);
    assertEquals(m.healthRounds.map((r) => [r.id, r.purpose]), [["preview-1", "preflight"]]);
    assert(m.safeguards.some((s) => s.id === "DisruptionBudgetsAudited"));
    assert(!m.safeguards.some((s) => (s.id as string) === "NotASafeguard"));
    assertEquals([...new Set(m.reasons.map((r) => r.reason))], ["EvidenceFileMissing"]);
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("previewVerdict() refuses on a changed manifest or a refusing live finding", async () => {
  const f = await facts();
  const changed = await readBoundEvidence(
    { path: MANIFEST, sha256: "0".repeat(64), bytes: new TextEncoder().encode("x") },
    "/nonexistent",
  );
  assertEquals(changed.status === "unread" && changed.reason, "EvidenceManifestDigestMismatch");
  assertEquals(evidenceRefusal(changed)?.reason, "EvidenceManifestDigestMismatch");
  const refusedFacts = { ...f, evidence: changed, refusals: [evidenceRefusal(changed)!] };
  assertEquals(previewVerdict(refusedFacts, LIVE), "refused");
  assertEquals(previewVerdict(f, { ...LIVE, refused: true }), "refused");
  assertEquals(previewVerdict(f, { ...LIVE, held: true }), "held");
  assertEquals(previewVerdict(f, LIVE), "ready");
});

Deno.test("the renderer's preview verdict is the one the rows allow: the checks' ready is not READY while a P row is not evaluated", async () => {
  const f = await facts();
  assertEquals(previewVerdict(f, LIVE), "ready");
  const r = reconcileReports();
  const v = r.previewVerdict({ facts: f, verdict: "ready", generatedAt: 0, live: LIVE });
  assertEquals(v, "not-ready");
  const md = r.preview({ facts: f, verdict: "ready", generatedAt: 0, live: LIVE });
  assert(md.includes("**Verdict: NOT READY"), md.slice(0, 300));
});
