/** The parse memo behind the dispatch check (src/domain/content_memo.ts). */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ContentMemo } from "../../src/domain/content_memo.ts";

Deno.test("content memo: the same key is made once; another key (changed content) is made again", () => {
  const memo = new ContentMemo<string>(2);
  let made = 0;
  const make = (v: string) => () => (made++, v);
  assertEquals(memo.get("a\0sha1", make("A")), "A");
  assertEquals(memo.get("a\0sha1", make("other")), "A");
  assertEquals(made, 1);
  assertEquals(memo.get("a\0sha2", make("B")), "B");
  assertEquals(made, 2);
});

Deno.test("content memo: bounded, the oldest entry goes first", () => {
  const memo = new ContentMemo<number>(2);
  let made = 0;
  for (const k of ["k1", "k2", "k3"]) memo.get(k, () => ++made);
  assertEquals(memo.get("k3", () => -1), 3);
  assertEquals(memo.get("k2", () => -1), 2);
  assertEquals(memo.get("k1", () => ++made), 4, "k1 was evicted and made again");
});
