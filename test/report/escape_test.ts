import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { codeSpan, escapeText, ganttLabel } from "../../src/report/escape.ts";

Deno.test("escapeText() neutralises HTML, table pipes, backticks, links and line breaks", () => {
  assertEquals(escapeText("<b>|`x`|</b>"), "&lt;b&gt;&#124;&#96;x&#96;&#124;&lt;/b&gt;");
  assertEquals(escapeText("[a](b) *c* _d_"), "\\[a\\](b) \\*c\\* \\_d\\_");
  assertEquals(escapeText("a\nb\r\nc"), "a\u21b5b\u21b5c");
  assertEquals(escapeText("x\u202ey\u200bz"), "x\ufffdy\ufffdz");
  ok(!escapeText("see https://evil.example").includes("https://"));
});

Deno.test("codeSpan() only uses inline code for plainly safe identifiers", () => {
  assertEquals(codeSpan("worker-1"), "`worker-1`");
  assertEquals(codeSpan("a`b"), "a&#96;b");
  assertEquals(codeSpan("a b"), "a b");
});

Deno.test("ganttLabel() keeps Mermaid syntax out of section and task names", () => {
  assertEquals(ganttLabel("cp-1: crit; #x %%y"), "cp-1_ crit_ _x __y");
  assertEquals(ganttLabel("section evil"), "_section evil");
  assertEquals(ganttLabel("title"), "_title");
  assertEquals(ganttLabel(":::"), "___");
  assertEquals(ganttLabel(""), "_");
  ok(ganttLabel("n".repeat(500)).length <= 60);
});
