import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseEvidenceManifest } from "../../../src/domain/evidence/manifest.ts";

const SAMPLE = Deno.readTextFileSync(
  new URL("../../../fixtures/evidence/upgrade-order.yaml", import.meta.url),
);

Deno.test("parseEvidenceManifest() accepts the sample manifest", () => {
  const r = parseEvidenceManifest(SAMPLE, "upgrade-order.yaml");
  assert(r.ok, JSON.stringify(!r.ok && r.problems));
  assertEquals(r.manifest.sources.length, 3);
  assertEquals(r.manifest.controls.map((c) => c.kind), ["reversed-order", "corrupted-cache"]);
});

Deno.test("parseEvidenceManifest() locates a short revision at its line and column", () => {
  const text = SAMPLE.replace(
    "revision: 9684195043cd45bfc1ee12802bc1117c4ae08fde",
    "revision: v1.14.0",
  );
  const r = parseEvidenceManifest(text, "m.yaml");
  assert(!r.ok);
  const p = r.problems[0]!;
  assertEquals(p.reason, "EvidenceManifestInvalid");
  assertEquals(p.location?.path, "sources[0].revision");
  const line = text.split("\n").findIndex((l) => l.includes("revision: v1.14.0")) + 1;
  assertEquals([p.location?.line, p.location?.column], [line, 15]);
});

Deno.test("parseEvidenceManifest() refuses unknown fields, path traversal and dangling references", () => {
  const cases = [
    SAMPLE.replace("    ref: v1.14.0-fixture", "    branch: main"),
    SAMPLE.replace("path: manager_apply.go", "path: ../../etc/passwd"),
    SAMPLE.replace("source: ssa-apply\n    text:", "source: nowhere\n    text:"),
    SAMPLE.replace("assertion: install-precedes-drain", "assertion: apply-forces-ownership"),
    SAMPLE.replace("expect: fail", "expect: pass"),
    "apiVersion: [\n",
  ];
  for (const text of cases) {
    const r = parseEvidenceManifest(text, "m.yaml");
    assert(!r.ok, text.slice(0, 40));
    assert(r.problems.every((p) => p.reason === "EvidenceManifestInvalid" && p.location));
  }
});

Deno.test("parseEvidenceManifest() refuses a repo git could run as a command, located, with EvidenceRepoUrlInvalid", () => {
  for (
    const hostile of [
      '"--upload-pack=touch /tmp/cairn-pwned"',
      '"ext::sh -c touch% /tmp/cairn-pwned"',
      '"https://git.example.invalid/x.git\\n--upload-pack=x"',
    ]
  ) {
    const text = SAMPLE.replace(
      "repo: https://git.example.invalid/fluxcd/pkg.git",
      `repo: ${hostile}`,
    );
    assert(text !== SAMPLE);
    const r = parseEvidenceManifest(text, "m.yaml");
    assert(!r.ok, hostile);
    assertEquals(r.problems.length, 1, hostile);
    const p = r.problems[0]!;
    assertEquals(p.reason, "EvidenceRepoUrlInvalid");
    assertEquals(p.location?.path, "sources[2].repo");
    const line = text.split("\n").findIndex((l) => l.includes(`repo: ${hostile}`)) + 1;
    assertEquals([p.location?.line, p.location?.column], [line, 11]);
  }
});
