import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { checkEvidence, sealAgainstSecrets } from "../../src/domain/evidence/checker.ts";
import { parseEvidenceManifest } from "../../src/domain/evidence/manifest.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { evidenceOutcomeRows, evidenceRows } from "../../src/report/from_evidence.ts";

const root = new URL("../../", import.meta.url);
const FILE = "evidence/upgrade-order.yaml";
const manifestBytes = await Deno.readFile(new URL(FILE, root));
const parsed = parseEvidenceManifest(new TextDecoder().decode(manifestBytes), FILE);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const manifest = parsed.manifest;

/** The synthetic upstream files the manifest pins, as an offline cache would hold them. */
const UPSTREAM: Record<string, string> = {
  "talos-upgrade": "talos/cmd/talosctl/cmd/talos/upgrade.go",
  "talos-kubernetes-upgrade": "talos/pkg/cluster/kubernetes/upgrade.go",
  "ssa-apply": "ssa/manager_apply.go",
};

async function fullCache(): Promise<Map<string, Uint8Array>> {
  const cache = new Map<string, Uint8Array>();
  for (const [id, path] of Object.entries(UPSTREAM)) {
    cache.set(id, await Deno.readFile(new URL(`fixtures/evidence/upstream/${path}`, root)));
  }
  return cache;
}

async function rows(cached: Map<string, Uint8Array>) {
  const outcome = await checkEvidence({ manifest, manifestFile: FILE, manifestBytes, cached });
  assert(outcome.status === "checked");
  return { result: outcome.result, rows: evidenceRows(outcome.result) };
}

Deno.test("evidenceRows() gives every tuple with both hashes and every assertion and control a passing row", async () => {
  const { rows: r } = await rows(await fullCache());
  assertEquals(r.sourceChecks.length, manifest.sources.length);
  for (const [i, s] of manifest.sources.entries()) {
    const row = r.sourceChecks[i]!;
    assertEquals(
      [row.repository, row.revision, row.path, row.expectedSha256, row.actualSha256, row.verdict],
      [s.repo, s.revision, s.path, s.sha256, s.sha256, "pass"],
    );
  }
  assertEquals(r.assertions.map((a) => [a.name, a.verdict]), [
    ...manifest.assertions.map((a) => [a.name, "pass"]),
    ...manifest.controls.map((c) => [`control ${c.name}`, "pass"]),
  ]);
  assert(r.assertions.at(-1)!.detail.includes("observed fail"), r.assertions.at(-1)!.detail);
});

Deno.test("evidenceRows() shows an unavailable offline cache as unreadable, never as pass", async () => {
  const { result, rows: r } = await rows(new Map());
  assertEquals(result.ok, false);
  assertEquals(r.sourceChecks.map((s) => [s.verdict, s.reason, s.actualSha256]), [
    ...manifest.sources.map(() => ["unreadable", "EvidenceFileMissing", undefined]),
  ]);
  const assertionRows = r.assertions.slice(0, manifest.assertions.length);
  assertEquals(assertionRows.map((a) => a.verdict), manifest.assertions.map(() => "unreadable"));
  const corrupted = r.assertions.find((a) => a.name === "control corrupted-cache")!;
  assertEquals(corrupted.verdict, "unreadable");
});

Deno.test("evidenceRows() fails a corrupted tuple with its actual hash and leaves its assertions unevaluated", async () => {
  const cache = await fullCache();
  const garbage = new TextEncoder().encode("not the pinned file\n");
  cache.set("talos-upgrade", garbage);
  const { rows: r } = await rows(cache);
  const bad = r.sourceChecks[0]!;
  assertEquals(
    [bad.verdict, bad.reason, bad.actualSha256],
    ["fail", "EvidenceHashMismatch", await sha256Hex(garbage)],
  );
  assertEquals(r.sourceChecks.slice(1).map((s) => s.verdict), ["pass", "pass"]);
  const over = manifest.assertions.filter((a) => a.source === "talos-upgrade").map((a) => a.name);
  for (const a of r.assertions.filter((x) => over.includes(x.name))) {
    assertEquals(a.verdict, "unreadable", a.name);
  }
  const others = r.assertions.filter((x) =>
    !over.includes(x.name) && !x.name.startsWith("control")
  );
  assert(others.length > 0 && others.every((a) => a.verdict === "pass"));
});

Deno.test("evidenceRows() fails a control that passed although it must fail", async () => {
  const { result } = await rows(await fullCache());
  const control = result.controls[0]!;
  const broken = {
    ...result,
    controls: [{
      ...control,
      observed: "pass" as const,
      verdict: "fail" as const,
      reason: "EvidenceControlUnexpectedlyPassed" as const,
    }],
  };
  const r = evidenceRows(broken);
  assertEquals(r.assertions.at(-1)!.verdict, "fail");
});

Deno.test("evidenceOutcomeRows() releases no verdict text of a result refused for a secret", async () => {
  const { result } = await rows(await fullCache());
  const leaky = {
    ...result,
    sources: [{ ...result.sources[0]!, message: "-----BEGIN OPENSSH PRIVATE KEY-----" }],
  };
  const outcome = sealAgainstSecrets(leaky);
  assert(outcome.status === "refused");
  const r = evidenceOutcomeRows(outcome, FILE);
  assertEquals(r.sourceChecks, []);
  assertEquals(r.assertions.map((a) => [a.verdict, a.detail]), [
    ["unreadable", "EvidenceSecretDetected: results withheld"],
  ]);
});
