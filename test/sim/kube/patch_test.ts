import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import {
  fieldSetOf,
  jsonPatch,
  leafPaths,
  mergePatch,
  owns,
  PatchError,
  strategicMerge,
} from "../../../src/sim/kube/patch.ts";

Deno.test("mergePatch() sets fields, removes them with null and replaces lists", () => {
  const node = { spec: { unschedulable: true, taints: [{ key: "a" }], podCIDR: "10.0.0.0/24" } };
  assertEquals(mergePatch(node, { spec: { unschedulable: null, taints: [{ key: "b" }] } }), {
    spec: { taints: [{ key: "b" }], podCIDR: "10.0.0.0/24" },
  });
  assertEquals(node.spec.unschedulable, true, "the target is not mutated");
});

Deno.test("strategicMerge() merges keyed lists by key and honours $patch: delete", () => {
  const pod = {
    status: {
      conditions: [{ type: "Ready", status: "True" }, { type: "PodScheduled", status: "True" }],
    },
  };
  const out = strategicMerge(pod, {
    status: {
      conditions: [{ type: "Ready", status: "False" }, { type: "PodScheduled", $patch: "delete" }],
    },
  });
  assertEquals(out, { status: { conditions: [{ type: "Ready", status: "False" }] } });
});

Deno.test("jsonPatch() applies add/replace/remove in order and a failed test aborts", () => {
  const doc = { metadata: { labels: { a: "1" } }, spec: { list: [1, 3] } };
  const out = jsonPatch(doc, [
    { op: "add", path: "/metadata/labels/b~1c", value: "2" },
    { op: "add", path: "/spec/list/1", value: 2 },
    { op: "replace", path: "/metadata/labels/a", value: "9" },
    { op: "remove", path: "/spec/list/0" },
  ]);
  assertEquals(out, { metadata: { labels: { a: "9", "b/c": "2" } }, spec: { list: [2, 3] } });
  throws(
    () => jsonPatch(doc, [{ op: "test", path: "/metadata/labels/a", value: "2" }]),
    PatchError,
  );
  throws(() => jsonPatch(doc, [{ op: "replace", path: "/nope/x", value: 1 }]), PatchError);
});

Deno.test("fieldSetOf() of a cordon patch owns spec.unschedulable", () => {
  const set = fieldSetOf({ spec: { unschedulable: true } });
  assertEquals(leafPaths(set), [["spec", "unschedulable"]]);
  assertEquals([owns(set, ["spec", "unschedulable"]), owns(set, ["spec", "taints"])], [
    true,
    false,
  ]);
});
