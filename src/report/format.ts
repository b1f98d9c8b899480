/** Small deterministic formatters shared by the report sections. */
import { escapeText, truncate } from "./escape.ts";

/** Epoch ms as ISO-8601 UTC (`2026-10-20T12:00:00Z`, milliseconds only when present). */
export function iso(ms: number): string {
  if (!Number.isFinite(ms)) return "invalid time";
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/**
 * Epoch ms as `09:00:15` when it falls on the same UTC day as `day`, else as full ISO-8601: long
 * tables stay narrow without ever leaving a time's date ambiguous.
 */
export function clock(ms: number, day: number): string {
  const full = iso(ms);
  if (!Number.isFinite(day) || full.slice(0, 10) !== iso(day).slice(0, 10)) return full;
  return full.slice(11).replace("Z", "");
}

/** Epoch ms as a Mermaid gantt date (`YYYY-MM-DD HH:mm:ss`, UTC). */
export function ganttDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

/** A span in ms as `2h 03m`, `4m 05s` or `12.3s`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "n/a";
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}h ${pad(m)}m` : `${m}m ${pad(s % 60)}s`;
}

/** Escaped and truncated free text. */
export function text(raw: string, max: number): string {
  return escapeText(truncate(raw, max));
}

/** Rows chosen for a bounded table: notable rows first, then the earliest others. */
export interface Picked<T> {
  /** In their original order. */
  readonly shown: readonly T[];
  readonly omitted: number;
  readonly omittedNotable: number;
}

/** Picks at most `cap` items, preferring notable ones, keeping original order. */
export function pick<T>(items: readonly T[], cap: number, notable: (t: T) => boolean): Picked<T> {
  if (items.length <= cap) return { shown: items, omitted: 0, omittedNotable: 0 };
  const chosen = new Set<number>();
  items.forEach((t, i) => {
    if (chosen.size < cap && notable(t)) chosen.add(i);
  });
  items.forEach((_, i) => {
    if (chosen.size < cap) chosen.add(i);
  });
  const notableTotal = items.filter(notable).length;
  const shown = items.filter((_, i) => chosen.has(i));
  return {
    shown,
    omitted: items.length - shown.length,
    omittedNotable: notableTotal - shown.filter(notable).length,
  };
}

/** The line under a summarised table. */
export function omittedLine(p: Picked<unknown>, what: string): string[] {
  if (p.omitted === 0) return [];
  const notable = p.omittedNotable > 0 ? ` (${p.omittedNotable} of them need attention)` : "";
  return ["", `_${p.omitted} more ${what} not shown${notable}; all are in the journal._`];
}

/** Counts by key, in first-seen order. */
export function countBy<T>(items: readonly T[], key: (t: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const t of items) counts.set(key(t), (counts.get(key(t)) ?? 0) + 1);
  return [...counts];
}
