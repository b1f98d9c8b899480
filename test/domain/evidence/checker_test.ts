import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { checkEvidence, type EvidenceInputs } from "../../../src/domain/evidence/checker.ts";
import { parseEvidenceManifest } from "../../../src/domain/evidence/manifest.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";

const enc = new TextEncoder();
const UPGRADE = `func upgrade() error {\n\tpull()\n\tinstall()\n\tdrain()\n\treturn nil\n}\n`;

async function manifest(extra = "", controls = "") {
  const sha = await sha256Hex(enc.encode(UPGRADE));
  const text = `apiVersion: cairn.dev/v1alpha1
kind: EvidenceManifest
metadata: { name: unit }
sources:
  - { id: up, repo: "file:///r.git", revision: "${"a".repeat(40)}", path: up.go, sha256: "${sha}" }
assertions:
  - { name: install-first, kind: order, source: up, function: upgrade, calls: [pull, install, drain] }
${extra}controls:
  - { name: reversed, kind: reversed-order, assertion: install-first, expect: fail }
  - { name: corrupt, kind: corrupted-cache, source: up, expect: fail }
${controls}`;
  const r = parseEvidenceManifest(text, "unit.yaml");
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { manifest: r.manifest, manifestFile: "unit.yaml", manifestBytes: enc.encode(text) };
}

function inputs(base: Awaited<ReturnType<typeof manifest>>, file = UPGRADE): EvidenceInputs {
  return { ...base, cached: new Map([["up", enc.encode(file)]]) };
}

Deno.test("checkEvidence() passes when hashes match, assertions hold and controls fail", async () => {
  const out = await checkEvidence(inputs(await manifest()));
  assert(out.status === "checked");
  assertEquals(out.result.ok, true);
  assertEquals(out.result.controls.map((c) => [c.observed, c.verdict]), [["fail", "pass"], [
    "fail",
    "pass",
  ]]);
  assertEquals(out.result.counts.assertions, { passed: 1, failed: 0 });
});

Deno.test("checkEvidence() names the tuple, expected and actual hash of a corrupted entry", async () => {
  const base = await manifest();
  const out = await checkEvidence(inputs(base, "garbage"));
  assert(out.status === "checked");
  const s = out.result.sources[0]!;
  assertEquals([out.result.ok, s.verdict, s.reason], [false, "fail", "EvidenceHashMismatch"]);
  assert(s.message.includes(`file:///r.git@${"a".repeat(40)}:up.go`), s.message);
  assert(s.message.includes(base.manifest.sources[0]!.sha256), s.message);
  assert(s.message.includes(await sha256Hex(enc.encode("garbage"))), s.message);
  assertEquals(out.result.assertions[0]!.verdict, "fail");
});

Deno.test("checkEvidence() fails a control that passes when it must fail", async () => {
  const base = await manifest(
    "",
    "  - { name: same-order, kind: reversed-order, assertion: install-first, calls: [pull, install, drain], expect: fail }\n",
  );
  const out = await checkEvidence(inputs(base));
  assert(out.status === "checked");
  const c = out.result.controls.find((x) => x.name === "same-order")!;
  assertEquals([c.observed, c.verdict, c.reason], [
    "pass",
    "fail",
    "EvidenceControlUnexpectedlyPassed",
  ]);
  assertEquals(out.result.ok, false);
});

Deno.test("checkEvidence() reports a missing cache entry and a failed fetch", async () => {
  const base = await manifest();
  const missing = await checkEvidence({ ...base, cached: new Map() });
  assert(missing.status === "checked");
  assertEquals(missing.result.sources[0]!.reason, "EvidenceFileMissing");
  assertEquals(missing.result.controls[1]!.observed, "not-run");
  const fetchFailed = await checkEvidence({
    ...inputs(base),
    fetched: new Map([["up", { ok: false, message: "no such commit" }]]),
  });
  assert(fetchFailed.status === "checked");
  assertEquals(fetchFailed.result.mode, "fetch");
  assertEquals(fetchFailed.result.sources[0]!.reason, "EvidenceFetchFailed");
});

Deno.test("checkEvidence() refuses to release a result carrying a secret-looking value", async () => {
  const base = await manifest(
    `  - { name: leaky, kind: contains, source: up, text: "-----BEGIN RSA PRIVATE KEY-----" }\n`,
  );
  const out = await checkEvidence(inputs(base));
  assert(out.status === "refused");
  assertEquals(out.problem.reason, "EvidenceSecretDetected");
  assert(!out.problem.message.includes("BEGIN RSA"));
  assertEquals(out.findings[0]?.kind, "private-key-block");
});
