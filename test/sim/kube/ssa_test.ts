import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import { applyManaged, recordUpdate, SsaConflict } from "../../../src/sim/kube/ssa.ts";
import type { Obj, ResourceType } from "../../../src/sim/kube/store.ts";

const NODE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Node",
  plural: "nodes",
  namespaced: false,
};
const T = Date.parse("2026-12-01T09:00:00Z");
type Entry = { manager: string; operation: string; fieldsV1: Record<string, unknown> };
const entries = (o: Obj) => (o.metadata.managedFields ?? []) as unknown as Entry[];
const ownersOfUnschedulable = (o: Obj) =>
  entries(o).filter((e) =>
    (e.fieldsV1["f:spec"] as Record<string, unknown> | undefined)?.["f:unschedulable"]
  ).map((e) => e.manager);

Deno.test("recordUpdate() moves ownership of a written field to the last writer", () => {
  const node: Obj = { metadata: { name: "w-1" }, spec: {} };
  recordUpdate(node, undefined, { spec: { unschedulable: true } }, "kubectl", NODE, T);
  assertEquals(ownersOfUnschedulable(node), ["kubectl"]);
  recordUpdate(node, node, { spec: { unschedulable: true } }, "cairn", NODE, T);
  assertEquals(ownersOfUnschedulable(node), ["cairn"]);
  assertEquals(entries(node).map((e) => [e.manager, e.operation]), [["cairn", "Update"]]);
});

Deno.test("applyManaged() refuses to change a field another manager owns unless forced", () => {
  const node: Obj = { metadata: { name: "w-1" }, spec: { unschedulable: true } };
  recordUpdate(node, undefined, { spec: { unschedulable: true } }, "kubectl", NODE, T);
  const applied: Obj = { metadata: { name: "w-1" }, spec: { unschedulable: false } };
  const err = (() => {
    try {
      applyManaged(node, applied, "cairn", false, NODE, T);
    } catch (e) {
      return e;
    }
  })();
  assert(err instanceof SsaConflict);
  assertEquals(err.causes.map((c) => [c.type, c.field]), [[
    "FieldManagerConflict",
    ".spec.unschedulable",
  ]]);
  const forced = applyManaged(node, applied, "cairn", true, NODE, T);
  assertEquals((forced.spec as { unschedulable: boolean }).unschedulable, false);
  assertEquals(ownersOfUnschedulable(forced), ["cairn"]);
  throws(() =>
    applyManaged(forced, { ...applied, spec: { unschedulable: true } }, "x", false, NODE, T)
  );
});

Deno.test("applyManaged() setting the value another manager already wrote is not a conflict", () => {
  const node: Obj = { metadata: { name: "w-1" }, spec: { unschedulable: true } };
  recordUpdate(node, undefined, { spec: { unschedulable: true } }, "kubectl", NODE, T);
  const out = applyManaged(
    node,
    { metadata: { name: "w-1" }, spec: { unschedulable: true } },
    "cairn",
    false,
    NODE,
    T,
  );
  assert(ownersOfUnschedulable(out).includes("cairn"));
  assertEquals((out.spec as { unschedulable: boolean }).unschedulable, true);
});
