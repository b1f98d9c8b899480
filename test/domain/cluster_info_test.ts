/**
 * parseClusterInfo answers by text: the same text (parsed or remembered) gives the same answer,
 * each caller its own copy, and a text naming no cluster stays unreadable.
 */
import { deepStrictEqual as assertEquals, notStrictEqual, ok as assert } from "node:assert/strict";
import { parseClusterInfo } from "../../src/domain/cluster_info.ts";

Deno.test("parseClusterInfo: a text read again answers the same, as a copy of its own", () => {
  const text = "clusterId: abc\nclusterName: home\n";
  const first = parseClusterInfo(text)!;
  assertEquals(first, { clusterName: "home", clusterId: "abc" });
  (first as { clusterName: string }).clusterName = "changed by a caller";
  const again = parseClusterInfo(text)!;
  assertEquals(again, { clusterName: "home", clusterId: "abc" });
  notStrictEqual(again, parseClusterInfo(text));
});

Deno.test("parseClusterInfo: texts naming no cluster stay unreadable when read again", () => {
  for (
    const text of ["clusterId: abc\n", "clusterName: ''\n", ": : :\n  - [", "", "x".repeat(5000)]
  ) {
    assertEquals(parseClusterInfo(text), undefined, JSON.stringify(text.slice(0, 20)));
    assertEquals(parseClusterInfo(text), undefined, JSON.stringify(text.slice(0, 20)));
  }
  const long = `clusterName: big\nclusterId: ${"i".repeat(5000)}\n`;
  assert(parseClusterInfo(long)?.clusterName === "big");
  assert(parseClusterInfo(long)?.clusterName === "big");
});
