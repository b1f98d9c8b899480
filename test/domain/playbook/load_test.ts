import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { formatProblem, type Problem } from "../../../src/domain/errors.ts";
import { parsePlaybook, parsePlaybookSet } from "../../../src/domain/playbook/load.ts";

const enc = new TextEncoder();
const shipped = new URL("../../../playbooks/", import.meta.url);
const ROOK = await Deno.readTextFile(new URL("rook-ceph.yaml", shipped));

function problems(text: string, file = "playbooks/x.yaml"): readonly Problem[] {
  const r = parsePlaybook(enc.encode(text), file);
  assert(!r.ok, "expected the playbook to be refused");
  return r.problems;
}

function lineOf(text: string, needle: string): number {
  const i = text.indexOf(needle);
  assert(i >= 0, `${needle} not in text`);
  return text.slice(0, i).split("\n").length;
}

Deno.test("the shipped rook-ceph playbook parses into its pin sets, deviations and companions", () => {
  const r = parsePlaybook(enc.encode(ROOK), "playbooks/rook-ceph.yaml");
  assert(r.ok, r.ok ? "" : r.problems.map(formatProblem).join("\n"));
  const s = r.playbook.spec;
  assertEquals(s.pinSets.map((p) => p.id), ["rook", "csi-drivers"]);
  assert(s.deviations.some((d) => d.id === "rbd-driver-name"));
  assertEquals(s.companions.map((c) => [c.id, c.ridesOn, c.oneWay]), [
    ["ceph", "rook.cluster-chart", "major"],
    ["cephcsi", "rook.operator-chart", "none"],
  ]);
});

Deno.test("an unknown field is refused at its key with PlaybookSchemaInvalid", () => {
  const text = ROOK.replace("  paths:\n", "  pathz: [a/]\n  paths:\n");
  const [p] = problems(text);
  assertEquals(p!.reason, "PlaybookSchemaInvalid");
  assertEquals(p!.location!.line, lineOf(text, "pathz"));
  assertEquals(p!.location!.column, 3);
  assert(/unknown field "pathz"/.test(p!.message));
});

Deno.test("a missing required section is located at its parent", () => {
  const text = ROOK.replace(/^ {2}rollback:\n( {4,}.*\n)*/m, "");
  const ps = problems(text);
  assert(ps.some((p) => p.reason === "PlaybookSchemaInvalid" && /rollback/.test(p.message)));
});

Deno.test("a companion riding on a pin that does not exist is PlaybookSemanticInvalid, located", () => {
  const text = ROOK.replace("ridesOn: rook.cluster-chart", "ridesOn: rook.cluster-chrat");
  const ps = problems(text);
  assertEquals(ps.map((p) => p.reason), ["PlaybookSemanticInvalid"]);
  assertEquals(ps[0]!.location!.line, lineOf(text, "rook.cluster-chrat"));
  assertEquals(ps[0]!.location!.path, "spec.companions[0].ridesOn");
});

Deno.test("a detection naming an undefined deviation, and a capture without a group, are refused", () => {
  const text = ROOK.replace(
    "detectedBy: { deviation: rbd-driver-name }",
    "detectedBy: { deviation: nope }",
  )
    .replace(`capture: ':v?([0-9][^@\\s]*)'`, `capture: ':v?[0-9]+'`);
  const ps = problems(text);
  assertEquals(ps.map((p) => p.reason), ["PlaybookSemanticInvalid", "PlaybookSemanticInvalid"]);
  assert(ps.some((p) => /capture group/.test(p.message)));
  assert(ps.some((p) => /deviation "nope" is not defined/.test(p.message)));
});

Deno.test("a malformed YAML path in a selector is refused at load, not at review", () => {
  const text = ROOK.replace("yaml: spec.values.drivers.rbd.name", "yaml: spec.values..drivers");
  const ps = problems(text);
  assertEquals(ps[0]!.reason, "PlaybookSemanticInvalid");
  assertEquals(ps[0]!.location!.line, lineOf(text, "spec.values..drivers"));
});

Deno.test("a deviation with both expected and absent is refused", () => {
  const text = ROOK.replace(
    "expected: rook-ceph.rbd.csi.ceph.com\n",
    "expected: rook-ceph.rbd.csi.ceph.com\n      absent: true\n",
  );
  assert(problems(text).some((p) => /exactly one of expected, absent and present/.test(p.message)));
});

Deno.test("hostile input is refused before it is used: alias bomb, duplicate key, two documents, size", () => {
  const bomb = [
    "a: &a [x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
    "",
  ].join("\n");
  assertEquals(problems(bomb).map((p) => p.reason), ["PlaybookAliasBudgetExceeded"]);
  const dup = problems("apiVersion: cairn.dev/v1alpha1\nkind: Playbook\nkind: Playbook\n");
  assertEquals(dup.map((p) => [p.reason, p.location!.line]), [["PlaybookSyntaxInvalid", 3]]);
  const two = problems(ROOK + "---\nkind: Playbook\n");
  assertEquals(two.map((p) => p.reason), ["PlaybookSyntaxInvalid"]);
  const big = problems("# " + "x".repeat(300 * 1024) + "\n");
  assertEquals(big.map((p) => p.reason), ["PlaybookTooLarge"]);
  const ctl = problems("kind: Playbook\u0007\n");
  assertEquals(ctl.map((p) => p.reason), ["PlaybookSyntaxInvalid"]);
});

Deno.test("a set refuses a name that differs from its file and a component defined twice", () => {
  const r = parsePlaybookSet([
    { file: "playbooks/rook.yaml", bytes: enc.encode(ROOK) },
    { file: "playbooks/rook-ceph.yaml", bytes: enc.encode(ROOK) },
  ]);
  assert(!r.ok);
  assertEquals(r.problems.map((p) => [p.reason, p.location!.file]), [
    ["PlaybookSetInvalid", "playbooks/rook.yaml"],
    ["PlaybookSetInvalid", "playbooks/rook-ceph.yaml"],
  ]);
});

Deno.test("a one-way caveat naming an undefined pin set or companion is refused", () => {
  const text = ROOK.replace(
    "      companion: ceph\n      text: A Ceph major",
    "      companion: cepx\n      text: A Ceph major",
  );
  const ps = problems(text);
  assertEquals(ps.map((p) => p.reason), ["PlaybookSemanticInvalid"]);
  assert(/companion "cepx" is not defined/.test(ps[0]!.message));
});

Deno.test("an after-merge check names a reader cairn knows; every health-policy reader is one", async () => {
  const { AFTER_MERGE_READERS } = await import("../../../src/domain/playbook/schema.ts");
  const { BindingSchema } = await import("../../../src/domain/health/policy_schema.ts");
  for (const o of BindingSchema.options) {
    assert(AFTER_MERGE_READERS.includes(o.shape.reader.value as string), o.shape.reader.value);
  }
  const text = ROOK.replace("reader: ceph-health", "reader: ceph-healthz");
  const [p] = problems(text);
  assertEquals(p!.reason, "PlaybookSchemaInvalid");
  assertEquals(p!.location!.line, lineOf(text, "ceph-healthz"));
});
