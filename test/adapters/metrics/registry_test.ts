import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import { escapeLabelValue, MetricsRegistry } from "../../../src/adapters/metrics/registry.ts";
import { parseExposition } from "./prom_text_checker.ts";

Deno.test("MetricsRegistry renders HELP/TYPE, families by name and series by labels", () => {
  const r = new MetricsRegistry();
  const g = r.gauge({ name: "z_gauge", help: "a gauge", labelNames: ["k"] });
  const c = r.counter({ name: "a_total", help: "a counter" });
  g.set({ k: "b" }, 2);
  g.set({ k: "a" }, -1.5);
  c.inc();
  c.inc(undefined, 2);
  assertEquals(
    r.render(),
    [
      "# HELP a_total a counter",
      "# TYPE a_total counter",
      "a_total 3",
      "# HELP z_gauge a gauge",
      "# TYPE z_gauge gauge",
      'z_gauge{k="a"} -1.5',
      'z_gauge{k="b"} 2',
      "",
    ].join("\n"),
  );
});

Deno.test("escapeLabelValue() escapes backslash, double quote and newline, and the checker reads them back", () => {
  const hostile = 'a\\b"c\nd} x="y';
  assertEquals(escapeLabelValue(hostile), 'a\\\\b\\"c\\nd} x=\\"y');
  const r = new MetricsRegistry();
  r.counter({ name: "evil_total", help: "help with \\ and\nnewline", labelNames: ["v"] })
    .inc({ v: hostile });
  const text = r.render();
  assertEquals(text.split("\n").length, 4); // HELP, TYPE, one sample, trailing ""
  const fam = parseExposition(text).get("evil_total")!;
  assertEquals(fam.samples[0]!.labels, { v: hostile });
  assertEquals(fam.help, "help with \\\\ and\\nnewline");
});

Deno.test("Histogram renders cumulative buckets, +Inf, _sum and _count that the checker accepts", () => {
  const r = new MetricsRegistry();
  const h = r.histogram({ name: "lat_seconds", help: "x", labelNames: ["op"], buckets: [0.1, 1] });
  for (const v of [0.05, 0.1, 0.5, 3]) h.observe({ op: "fetch" }, v);
  const fam = parseExposition(r.render()).get("lat_seconds")!;
  assertEquals(
    fam.samples.map((s) => [s.name, s.labels["le"] ?? "", s.value]),
    [
      ["lat_seconds_bucket", "0.1", 2],
      ["lat_seconds_bucket", "1", 3],
      ["lat_seconds_bucket", "+Inf", 4],
      ["lat_seconds_sum", "", 3.65],
      ["lat_seconds_count", "", 4],
    ],
  );
});

Deno.test("MetricsRegistry refuses bad names, wrong label sets, negative counter steps and bad buckets", () => {
  const r = new MetricsRegistry();
  assertThrows(() => r.counter({ name: "bad-name", help: "" }), RangeError);
  assertThrows(() => r.gauge({ name: "g", help: "", labelNames: ["__x"] }), RangeError);
  assertThrows(
    () => r.histogram({ name: "h", help: "", labelNames: ["le"], buckets: [1] }),
    RangeError,
  );
  assertThrows(() => r.histogram({ name: "h2", help: "", buckets: [2, 1] }), RangeError);
  const c = r.counter({ name: "c_total", help: "", labelNames: ["a"] });
  assertThrows(() => c.inc({ a: "x" }, -1), RangeError);
  assertThrows(() => c.inc({ a: "x", b: "y" } as unknown as { a: string }), RangeError);
  assertThrows(() => r.counter({ name: "c_total", help: "" }), RangeError);
});

Deno.test("parseExposition() rejects what a scraper would reject", () => {
  const bad = [
    'x{a="b} 1\n', // unterminated value
    'x{a="\\t"} 1\n', // unknown escape
    "# TYPE x counter\nx 1\n# TYPE y gauge\ny 1\nx 2\n", // interleaved family
    "y 1\n", // sample before TYPE
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n', // not cumulative
    "# TYPE x counter\nx one\n",
  ];
  for (const text of bad) assertThrows(() => parseExposition(text), SyntaxError, text);
});
