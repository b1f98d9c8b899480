import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { healthPolicyDigest, parseHealthPolicy } from "../../../src/domain/health/policy_parse.ts";

const FIXTURE = new URL("../../../fixtures/health/home-ops.yaml", import.meta.url);

Deno.test("parseHealthPolicy() accepts the home-ops policy and its digest is SHA-256 of the bytes", async () => {
  const bytes = await Deno.readFile(FIXTURE);
  const r = parseHealthPolicy(new TextDecoder().decode(bytes), "home-ops.yaml");
  assert(r.ok, JSON.stringify(!r.ok && r.problems));
  assertEquals(r.policy.cluster, "home-ops");
  const readers = new Set(r.policy.bindings.map((b) => b.reader));
  for (
    const k of [
      "nodes",
      "workloads",
      "pdb-feasibility",
      "kube-object",
      "talos-etcd",
      "talos-services",
      "node-versions",
    ]
  ) {
    assert(readers.has(k as never), k);
  }
  const d = await healthPolicyDigest(bytes);
  const again = await healthPolicyDigest(new Uint8Array([...bytes, 10]));
  assert(/^[0-9a-f]{64}$/.test(d) && d !== again);
});

const HEAD =
  "apiVersion: cairn.dev/v1alpha1\nkind: HealthPolicy\nmetadata: {name: p, cluster: c}\nspec:\n  bindings:\n";

Deno.test("parseHealthPolicy() locates an unknown field with line, column and path", () => {
  const r = parseHealthPolicy(
    HEAD + "    - name: n\n      reader: nodes\n      colour: red\n",
    "p.yaml",
  );
  assert(!r.ok);
  const p = r.problems[0]!;
  assertEquals([p.reason, p.location?.line, p.location?.path], [
    "HealthPolicyInvalid",
    6,
    "spec.bindings[0]",
  ]);
  assert(p.message.includes("colour"));
});

Deno.test("parseHealthPolicy() refuses a CEL expression that does not parse, at the expression", () => {
  const text = HEAD +
    '    - name: ceph\n      reader: kube-object\n      healthCheck:\n        apiVersion: ceph.rook.io/v1\n        kind: CephCluster\n        expr: "status.ceph.health =="\n';
  const r = parseHealthPolicy(text, "p.yaml");
  assert(!r.ok);
  assertEquals([r.problems[0]?.reason, r.problems[0]?.location?.line], ["HealthPolicyInvalid", 11]);
  assertEquals(r.problems[0]?.location?.path, "spec.bindings[0].healthCheck.expr");
});

Deno.test("parseHealthPolicy() refuses duplicate binding names, bad YAML and half-written kube-object bindings", () => {
  const dup = parseHealthPolicy(
    HEAD + "    - {name: n, reader: nodes}\n    - {name: n, reader: nodes}\n",
    "p.yaml",
  );
  assert(!dup.ok && dup.problems[0]?.message.includes("duplicate"));
  const syntax = parseHealthPolicy(HEAD + "    - name: [\n", "p.yaml");
  assert(!syntax.ok && syntax.problems[0]?.reason === "HealthPolicySyntaxInvalid");
  const half = parseHealthPolicy(
    HEAD + "    - name: x\n      reader: kube-object\n      predicate: {cel: 'true'}\n",
    "p.yaml",
  );
  assert(!half.ok && half.problems[0]?.message.includes("selection"));
  const empty = parseHealthPolicy(HEAD.replace("  bindings:\n", "  bindings: []\n"), "p.yaml");
  assert(!empty.ok && empty.problems[0]?.location?.path === "spec.bindings");
});

Deno.test("a policy file that is not YAML lists ten problems without the parser's echo of the position", () => {
  const text = Array.from({ length: 40 }, (_, i) => `Line ${i}: says \`x\` here\nwords: a: b`)
    .join("\n");
  const r = parseHealthPolicy(text, "README.md");
  assertEquals(r.ok, false);
  if (r.ok) return;
  assertEquals(r.problems.length, 11, r.problems.map((p) => p.message).join("\n"));
  for (const p of r.problems) {
    assertEquals(/ at line \d+, column \d+/.test(p.message), false, p.message);
  }
  assertEquals(/^\d+ more YAML syntax errors not shown/.test(r.problems[10]!.message), true);
});
