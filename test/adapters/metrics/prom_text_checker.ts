/**
 * A strict reader of the Prometheus text exposition format (0.0.4), written for tests: it
 * throws on anything a scraper would reject (bad names, bad escapes, samples before their TYPE,
 * interleaved families, non-cumulative histogram buckets) and returns the parsed samples.
 */

/** One parsed sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One metric family. */
export interface MetricFamily {
  readonly name: string;
  type: string;
  help: string | undefined;
  readonly samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function fail(line: number, why: string): never {
  throw new SyntaxError(`exposition line ${line}: ${why}`);
}

function parseNumber(s: string, line: number): number {
  if (s === "+Inf" || s === "Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  if (s === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) fail(line, `bad number ${s}`);
  return Number(s);
}

/** Parses `{a="x",b="y\"z"}` starting at `text[0] === "{"`; returns labels and the rest. */
function parseLabels(text: string, line: number): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== "}") {
    const eq = text.indexOf("=", i);
    if (eq < 0) fail(line, "label without =");
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) fail(line, `bad label name ${name}`);
    if (name in labels) fail(line, `duplicate label ${name}`);
    if (text[eq + 1] !== '"') fail(line, "label value not quoted");
    let j = eq + 2;
    let value = "";
    for (;; j++) {
      const c = text[j];
      if (c === undefined) fail(line, "unterminated label value");
      if (c === '"') break;
      if (c === "\n") fail(line, "raw newline in label value");
      if (c === "\\") {
        const e = text[++j];
        if (e === "\\") value += "\\";
        else if (e === '"') value += '"';
        else if (e === "n") value += "\n";
        else fail(line, `bad escape \\${e}`);
      } else value += c;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") fail(line, "expected , or }");
  }
  return [labels, text.slice(i + 1)];
}

function familyOf(sample: string, fams: Map<string, MetricFamily>): MetricFamily | undefined {
  if (fams.has(sample)) return fams.get(sample);
  const base = sample.replace(/_(bucket|sum|count)$/, "");
  const f = fams.get(base);
  return f && f.type === "histogram" ? f : undefined;
}

function checkHistogram(f: MetricFamily): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples.filter((s) => s.name.endsWith("_bucket"))) {
    const { le: _le, ...rest } = s.labels;
    const k = JSON.stringify(rest);
    series.set(k, [...(series.get(k) ?? []), s]);
  }
  for (const [k, buckets] of series) {
    let prevLe = -Infinity, prevCount = 0;
    for (const b of buckets) {
      const le = parseNumber(b.labels["le"] ?? fail(0, `${f.name} bucket without le`), 0);
      if (le <= prevLe) throw new SyntaxError(`${f.name}${k}: le not increasing`);
      if (b.value < prevCount) throw new SyntaxError(`${f.name}${k}: buckets not cumulative`);
      prevLe = le;
      prevCount = b.value;
    }
    if (prevLe !== Infinity) throw new SyntaxError(`${f.name}${k}: no +Inf bucket`);
    const count = f.samples.find((s) =>
      s.name === `${f.name}_count` && JSON.stringify(s.labels) === k
    );
    if (!count || count.value !== prevCount) {
      throw new SyntaxError(`${f.name}${k}: _count differs from +Inf bucket`);
    }
  }
}

/** Parses and checks an exposition; returns the families by name. */
export function parseExposition(text: string): Map<string, MetricFamily> {
  if (text !== "" && !text.endsWith("\n")) fail(0, "missing final newline");
  const fams = new Map<string, MetricFamily>();
  const closed = new Set<string>();
  let current: MetricFamily | undefined;
  const lines = text.split("\n").slice(0, -1);
  lines.forEach((raw, idx) => {
    const n = idx + 1;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) fail(n, `bad metric name ${name}`);
      if (closed.has(name)) fail(n, `family ${name} is not contiguous`);
      if (current && current.name !== name) closed.add(current.name);
      const f = fams.get(name) ?? { name, type: "untyped", help: undefined, samples: [] };
      if (f.samples.length > 0) fail(n, `${kind} after samples of ${name}`);
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) fail(n, `bad type ${rest}`);
        f.type = rest;
      } else {
        if (/\\[^\\n]/.test(rest.replaceAll("\\\\", ""))) fail(n, "bad escape in HELP");
        f.help = rest;
      }
      fams.set(name, f);
      current = f;
      return;
    }
    if (raw.startsWith("#") || raw === "") return;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(.*)$/.exec(raw) ?? fail(n, "bad sample line");
    let rest = m[2]!;
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) [labels, rest] = parseLabels(rest, n);
    const parts = rest.trim().split(" ");
    if (!rest.startsWith(" ") || parts.length < 1 || parts.length > 2) fail(n, "bad value part");
    const f = familyOf(m[1]!, fams) ?? fail(n, `sample ${m[1]} before its TYPE`);
    if (f !== current || closed.has(f.name)) fail(n, `sample of ${f.name} outside its family`);
    f.samples.push({ name: m[1]!, labels, value: parseNumber(parts[0]!, n) });
  });
  for (const f of fams.values()) if (f.type === "histogram") checkHistogram(f);
  return fams;
}
