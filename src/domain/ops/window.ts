/**
 * Maintenance windows: a cron-like start (five fields, minute hour day-of-month month
 * day-of-week), a duration and an IANA time zone. The time-zone arithmetic uses only `Intl` (the
 * runtime's own tz database): no network, no clock. Pure functions of their arguments.
 *
 * The rule they serve (issue 19): a node is committed only inside a window and only when its
 * expected step duration ends before that window does. A window's start is local wall time in its
 * zone, so "0 2 * * 6" opens at 02:00 Saturday in summer and in winter; a start that falls into a
 * spring-forward gap does not happen that day (the local time never exists), and a start in a
 * fall-back overlap opens at its first occurrence.
 */

/** One maintenance window as a plan or the cluster default declares it. */
export interface WindowSpec {
  /** Five cron fields: `minute hour day-of-month month day-of-week` (0 or 7 = Sunday). */
  readonly start: string;
  /** How long the window stays open after each start. */
  readonly durationMinutes: number;
  /** IANA zone, e.g. `Europe/Berlin`, `UTC`. */
  readonly timeZone: string;
}

/** A concrete opening: [opensAtMs, closesAtMs). */
export interface WindowInterval {
  readonly opensAtMs: number;
  readonly closesAtMs: number;
}

interface Cron {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  /** Vixie cron: when both day fields are restricted (neither starts with `*`), either matching is enough. */
  readonly dayOr: boolean;
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day-of-week", min: 0, max: 7 },
] as const;

/** Why a window spec is unusable, in plain words; undefined when it is fine. */
export function windowProblem(w: WindowSpec): string | undefined {
  try {
    parseCron(w.start);
  } catch (e) {
    return (e as Error).message;
  }
  if (!Number.isInteger(w.durationMinutes) || w.durationMinutes < 1) {
    return "durationMinutes must be a positive whole number";
  }
  if (w.durationMinutes > 7 * 24 * 60) return "durationMinutes must be at most one week (10080)";
  if (!isTimeZone(w.timeZone)) return `unknown time zone ${JSON.stringify(w.timeZone)}`;
  return undefined;
}

/** True when the runtime's tz database knows `tz`. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function parseCron(expr: string): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new RangeError(
      `start ${
        JSON.stringify(expr)
      } must have five fields (minute hour day-of-month month day-of-week)`,
    );
  }
  const sets = parts.map((p, i) => parseField(p, FIELDS[i]!));
  const weekdays = new Set([...sets[4]!].map((d) => d % 7));
  return {
    minutes: [...sets[0]!].sort((a, b) => a - b),
    hours: [...sets[1]!].sort((a, b) => a - b),
    days: sets[2]!,
    months: sets[3]!,
    weekdays,
    // A day field that starts with `*` (`*`, `*/2`) counts as unrestricted, as Vixie cron and
    // cronie read it: `0 2 */2 * 6` opens on odd-numbered Saturdays only, not on every odd day and
    // every Saturday (the fewer openings are also the safe reading).
    dayOr: !parts[2]!.startsWith("*") && !parts[4]!.startsWith("*"),
  };
}

function parseField(
  text: string,
  f: { readonly name: string; readonly min: number; readonly max: number },
): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!m) throw new RangeError(`${f.name} field ${JSON.stringify(text)} is not cron syntax`);
    const lo = m[1] === "*" ? f.min : Number(m[2]);
    const hi = m[1] === "*" ? f.max : m[3] !== undefined ? Number(m[3]) : m[4] ? f.max : lo;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (lo < f.min || hi > f.max || lo > hi || step < 1) {
      throw new RangeError(`${f.name} field ${JSON.stringify(text)} is out of ${f.min}-${f.max}`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** The wall-clock fields of `ms` in `tz`. */
interface Local {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = FORMATTERS.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    FORMATTERS.set(tz, f);
  }
  return f;
}

function local(ms: number, tz: string): Local {
  const p: Record<string, number> = {};
  for (const part of formatter(tz).formatToParts(new Date(ms))) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  return {
    year: p["year"]!,
    month: p["month"]!,
    day: p["day"]!,
    hour: p["hour"]! % 24,
    minute: p["minute"]!,
    second: p["second"]!,
  };
}

/** The zone's offset from UTC at instant `ms`, in ms (east positive). */
function offsetAt(ms: number, tz: string): number {
  const l = local(ms, tz);
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

const DAY_MS = 86_400_000;

/**
 * The instant local wall time (y-m-d h:m) names in `tz`: the earlier one in a fall-back overlap,
 * undefined in a spring-forward gap. The offsets a day either side cover both sides of at most one
 * transition, which is all any zone has within two days.
 */
function toInstant(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  tz: string,
): number | undefined {
  const naive = Date.UTC(y, mo - 1, d, h, mi);
  const found: number[] = [];
  for (const off of new Set([offsetAt(naive - DAY_MS, tz), offsetAt(naive + DAY_MS, tz)])) {
    const t = naive - off;
    const l = local(t, tz);
    if (l.year === y && l.month === mo && l.day === d && l.hour === h && l.minute === mi) {
      found.push(t);
    }
  }
  return found.length ? Math.min(...found) : undefined;
}

/** Starts of `w` in [fromMs, toMs], in order. */
export function windowStarts(w: WindowSpec, fromMs: number, toMs: number): number[] {
  const cron = parseCron(w.start);
  const out: number[] = [];
  const first = local(fromMs - DAY_MS, w.timeZone);
  // Walk local calendar days (UTC arithmetic on the date alone is exact for dates).
  for (
    let day = Date.UTC(first.year, first.month - 1, first.day);
    day <= toMs + 2 * DAY_MS;
    day += DAY_MS
  ) {
    const date = new Date(day);
    const y = date.getUTCFullYear(), mo = date.getUTCMonth() + 1, d = date.getUTCDate();
    if (!cron.months.has(mo)) continue;
    const domOk = cron.days.has(d), dowOk = cron.weekdays.has(date.getUTCDay());
    if (cron.dayOr ? !(domOk || dowOk) : !(domOk && dowOk)) continue;
    for (const h of cron.hours) {
      for (const mi of cron.minutes) {
        const t = toInstant(y, mo, d, h, mi, w.timeZone);
        if (t !== undefined && t >= fromMs && t <= toMs) out.push(t);
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/**
 * Openings of any of `windows` that overlap [fromMs, toMs], merged where they overlap or touch
 * (two windows back to back are one opening), in order.
 */
export function openings(
  windows: readonly WindowSpec[],
  fromMs: number,
  toMs: number,
): WindowInterval[] {
  const raw: WindowInterval[] = [];
  for (const w of windows) {
    const dur = w.durationMinutes * 60_000;
    for (const s of windowStarts(w, fromMs - dur, toMs)) {
      if (s + dur > fromMs) raw.push({ opensAtMs: s, closesAtMs: s + dur });
    }
  }
  raw.sort((a, b) => a.opensAtMs - b.opensAtMs);
  const merged: WindowInterval[] = [];
  for (const r of raw) {
    const last = merged[merged.length - 1];
    if (last && r.opensAtMs <= last.closesAtMs) {
      merged[merged.length - 1] = {
        opensAtMs: last.opensAtMs,
        closesAtMs: Math.max(last.closesAtMs, r.closesAtMs),
      };
    } else merged.push(r);
  }
  return merged;
}

/** How far ahead a next window is looked for: a year and a day covers any yearly cron. */
const HORIZON_MS = 367 * DAY_MS;
const CHUNK_MS = 8 * DAY_MS;

/**
 * The decision before a node commitment. No windows declared: always admitted (no window is not
 * a closed window). Otherwise admitted only inside an opening with at least `expectedMs` left.
 */
export type WindowDecision =
  | { readonly admit: true; readonly closesAtMs?: number }
  | {
    readonly admit: false;
    /** `closed`: outside every window; `too-short`: open, but the step would overrun it. */
    readonly why: "closed" | "too-short";
    /** The next opening long enough for the step; absent when none within a year. */
    readonly next?: WindowInterval;
    /** The opening we are in now (too-short only). */
    readonly current?: WindowInterval;
  };

/** Whether a node step expected to take `expectedMs` may be committed at `nowMs`. */
export function admitCommitment(
  windows: readonly WindowSpec[],
  nowMs: number,
  expectedMs: number,
): WindowDecision {
  if (windows.length === 0) return { admit: true };
  // Openings up to the step's expected end, so that a window touching the current one counts as
  // the same opening (hourly windows back to back admit a 90-minute step).
  const current = openings(windows, nowMs, nowMs + expectedMs).find((o) =>
    o.opensAtMs <= nowMs && nowMs < o.closesAtMs
  );
  if (current && current.closesAtMs - nowMs >= expectedMs) {
    return { admit: true, closesAtMs: current.closesAtMs };
  }
  const next = nextFitting(windows, nowMs, expectedMs);
  return {
    admit: false,
    why: current ? "too-short" : "closed",
    ...(next ? { next } : {}),
    ...(current ? { current } : {}),
  };
}

/** The next opening starting after `nowMs` that is at least `minMs` long. */
export function nextFitting(
  windows: readonly WindowSpec[],
  nowMs: number,
  minMs: number,
): WindowInterval | undefined {
  for (let from = nowMs; from < nowMs + HORIZON_MS; from += CHUNK_MS) {
    // An opening may straddle a chunk's end; merging over a chunk plus the longest window keeps it whole.
    const longest = Math.max(...windows.map((w) => w.durationMinutes * 60_000));
    const found = openings(windows, from, from + CHUNK_MS + longest)
      .find((o) => o.opensAtMs > nowMs && o.closesAtMs - o.opensAtMs >= minMs);
    if (found) return found;
  }
  return undefined;
}

/** The opening in force at `nowMs`, or else the next one (status and reports). */
export function nextWindow(
  windows: readonly WindowSpec[],
  nowMs: number,
): WindowInterval | undefined {
  if (windows.length === 0) return undefined;
  const current = openings(windows, nowMs, nowMs).find((o) => o.opensAtMs <= nowMs);
  return current ?? nextFitting(windows, nowMs, 0);
}
