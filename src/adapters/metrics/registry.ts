/**
 * A small Prometheus text-format (0.0.4) registry: counters, gauges and fixed-bucket histograms
 * with typed label names. Output is deterministic (families by name, series by label values) so
 * scrapes diff cleanly and tests compare text.
 */

/** Content type of {@link MetricsRegistry.render}'s output. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label values keyed by the family's label names. */
export type Labels<L extends string> = { readonly [K in L]: string };

/** Escapes a label value: backslash, double quote and newline (the format's three escapes). */
export function escapeLabelValue(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

/** Escapes HELP text: backslash and newline only. */
export function escapeHelp(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

/** Formats a sample value the way Prometheus parsers read it. */
export function formatValue(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

interface FamilySpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

abstract class Family<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  abstract readonly type: "counter" | "gauge" | "histogram";

  constructor(spec: FamilySpec<L>, reserved: readonly string[] = []) {
    if (!METRIC_NAME.test(spec.name)) throw new RangeError(`invalid metric name ${spec.name}`);
    const names = spec.labelNames ?? [];
    for (const l of names) {
      if (!LABEL_NAME.test(l) || l.startsWith("__") || reserved.includes(l)) {
        throw new RangeError(`invalid label name ${l} on ${spec.name}`);
      }
    }
    if (new Set(names).size !== names.length) {
      throw new RangeError(`duplicate label name on ${spec.name}`);
    }
    this.name = spec.name;
    this.help = spec.help;
    this.labelNames = names;
  }

  /** The label values in declaration order; refuses missing or extra labels. */
  protected key(labels: Labels<L> | undefined): string {
    const given = labels ? Object.keys(labels) : [];
    if (
      given.length !== this.labelNames.length ||
      given.some((k) => !this.labelNames.includes(k as L))
    ) {
      throw new RangeError(`${this.name} takes labels [${this.labelNames.join(",")}]`);
    }
    return JSON.stringify(this.labelNames.map((l) => String(labels![l])));
  }

  protected labelText(key: string, extra?: readonly [string, string]): string {
    const values = JSON.parse(key) as string[];
    const pairs = this.labelNames.map((l, i) => `${l}="${escapeLabelValue(values[i]!)}"`);
    if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
    return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
  }

  protected static sortedKeys<V>(m: Map<string, V>): string[] {
    return [...m.keys()].sort();
  }

  render(): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n` +
      this.samples().join("");
  }

  protected abstract samples(): string[];
}

/** A monotonically increasing counter. */
export class Counter<L extends string = never> extends Family<L> {
  readonly type = "counter";
  #values = new Map<string, number>();

  /** Adds `by` (default 1, never negative). */
  inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new RangeError(`${this.name}: counters only go up`);
    const k = this.key(labels);
    this.#values.set(k, (this.#values.get(k) ?? 0) + by);
  }

  get(labels?: Labels<L>): number {
    return this.#values.get(this.key(labels)) ?? 0;
  }

  protected samples(): string[] {
    return Family.sortedKeys(this.#values).map((k) =>
      `${this.name}${this.labelText(k)} ${formatValue(this.#values.get(k)!)}\n`
    );
  }
}

/** A value that goes up and down. */
export class Gauge<L extends string = never> extends Family<L> {
  readonly type = "gauge";
  #values = new Map<string, number>();

  set(labels: Labels<L> | undefined, value: number): void {
    this.#values.set(this.key(labels), value);
  }

  inc(labels?: Labels<L>, by = 1): void {
    const k = this.key(labels);
    this.#values.set(k, (this.#values.get(k) ?? 0) + by);
  }

  get(labels?: Labels<L>): number {
    return this.#values.get(this.key(labels)) ?? 0;
  }

  protected samples(): string[] {
    return Family.sortedKeys(this.#values).map((k) =>
      `${this.name}${this.labelText(k)} ${formatValue(this.#values.get(k)!)}\n`
    );
  }
}

interface HistogramSeries {
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A histogram with fixed upper bounds (the `+Inf` bucket is implicit). */
export class Histogram<L extends string = never> extends Family<L> {
  readonly type = "histogram";
  readonly buckets: readonly number[];
  #series = new Map<string, HistogramSeries>();

  constructor(spec: FamilySpec<L> & { readonly buckets: readonly number[] }) {
    super(spec, ["le"]);
    const b = spec.buckets.filter((x) => x !== Infinity);
    if (b.length === 0 || b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!))) {
      throw new RangeError(`${spec.name}: buckets must be finite and strictly increasing`);
    }
    this.buckets = Object.freeze([...b]);
  }

  observe(labels: Labels<L> | undefined, value: number): void {
    const k = this.key(labels);
    let s = this.#series.get(k);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    this.buckets.forEach((ub, i) => {
      if (value <= ub) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
  }

  protected samples(): string[] {
    return Family.sortedKeys(this.#series).flatMap((k) => {
      const s = this.#series.get(k)!;
      const lines = this.buckets.map((ub, i) =>
        `${this.name}_bucket${this.labelText(k, ["le", formatValue(ub)])} ${s.counts[i]}\n`
      );
      lines.push(`${this.name}_bucket${this.labelText(k, ["le", "+Inf"])} ${s.count}\n`);
      lines.push(`${this.name}_sum${this.labelText(k)} ${formatValue(s.sum)}\n`);
      lines.push(`${this.name}_count${this.labelText(k)} ${s.count}\n`);
      return lines;
    });
  }
}

/** Holds metric families and renders them in the text exposition format. */
export class MetricsRegistry {
  #families = new Map<string, Family<string>>();

  counter<L extends string = never>(spec: FamilySpec<L>): Counter<L> {
    return this.#add(new Counter<L>(spec));
  }

  gauge<L extends string = never>(spec: FamilySpec<L>): Gauge<L> {
    return this.#add(new Gauge<L>(spec));
  }

  histogram<L extends string = never>(
    spec: FamilySpec<L> & { readonly buckets: readonly number[] },
  ): Histogram<L> {
    return this.#add(new Histogram<L>(spec));
  }

  /** The whole registry as Prometheus text, families sorted by name. */
  render(): string {
    return [...this.#families.keys()].sort().map((n) => this.#families.get(n)!.render()).join("");
  }

  #add<F extends Family<string>>(f: F): F {
    if (this.#families.has(f.name)) throw new RangeError(`metric ${f.name} registered twice`);
    this.#families.set(f.name, f as Family<string>);
    return f;
  }
}
