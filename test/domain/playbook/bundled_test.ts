import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseBundledVersions } from "../../../src/domain/playbook/bundled.ts";
import { renderBundledVersions } from "../../../src/sim/gitops/upstream.ts";

const enc = new TextEncoder();
const HEAD = [
  "apiVersion: cairn.dev/v1alpha1",
  "kind: BundledVersions",
  "metadata: { name: t, date: 2026-11-25 }",
  "spec:",
  "  entries:",
].join("\n");

Deno.test("a bundled-versions lookup ignores a leading v on the tag and knows only what is listed", () => {
  const r = parseBundledVersions(enc.encode(renderBundledVersions()), "b.yaml");
  assert(r.ok);
  assertEquals(r.bundled.lookup("rook-ceph-cluster", "v1.19.3")?.version, "v19.2.3");
  assertEquals(r.bundled.lookup("rook-ceph-cluster", "1.19.3")?.version, "v19.2.3");
  assertEquals(r.bundled.lookup("rook-ceph-cluster", "v9.9.9"), undefined);
  assertEquals(r.bundled.lookup("unknown", "v1.19.3"), undefined);
});

Deno.test("an entry listed twice and an unknown field are BundledVersionsInvalid, located", () => {
  const entry = "    - { artifact: a, tag: v1.0.0, version: v2.0.0, source: s }";
  const twice = parseBundledVersions(enc.encode(`${HEAD}\n${entry}\n${entry}\n`), "b.yaml");
  assert(!twice.ok);
  assertEquals(twice.problems.map((p) => [p.reason, p.location?.line]), [[
    "BundledVersionsInvalid",
    7,
  ]]);
  const unknown = parseBundledVersions(
    enc.encode(`${HEAD}\n    - { artifact: a, tag: v1, version: v2, source: s, extra: 1 }\n`),
    "b.yaml",
  );
  assert(!unknown.ok);
  assertEquals(unknown.problems[0]!.reason, "BundledVersionsInvalid");
  assert(/unknown field "extra"/.test(unknown.problems[0]!.message));
});
