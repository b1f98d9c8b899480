/**
 * The execution report's "Holds and events beside the steps" section (docs/operating.md): every
 * hold before a commitment (a closed window, a freeze, a breakpoint) with why and until when, its
 * resume, stalls noticed while a step waited, silences created and expired, hooks and
 * notifications. Pure: journal history in, lines out; every outside string escaped.
 */
import { codeSpan, tableHead, tableRow } from "./escape.ts";
import { iso, omittedLine, pick, text } from "./format.ts";
import type { RenderLimits } from "./model.ts";
import type { PlanHistory, RolloutEventEntry } from "../ports/journal_history.ts";

/** One recorded event beside the node steps. */
export interface BesideEvent {
  readonly at: number;
  readonly node: string | null;
  /** `hold`, `resume`, `stall`, `silence-created`, `silence-renewed`, `silence-expired`, `notification`. */
  readonly kind: string;
  readonly reason: string | null;
  readonly detail: string;
  readonly actor: string;
}

/** The plan's rollout events as report rows. */
export function besideEvents(h: PlanHistory | undefined): BesideEvent[] {
  // A silence's routine renewals (one every few minutes of a step) are folded into the row that
  // ends it as a count; a renewal that went wrong keeps its own row.
  const renewals = new Map<string, number>();
  const out: BesideEvent[] = [];
  for (const e of h?.rolloutEvents ?? []) {
    const key = `${e.node}\u0000${String(e.detail["silence"])}`;
    if (e.kind === "silence-renewed" && e.detail["reason"] === undefined) {
      renewals.set(key, (renewals.get(key) ?? 0) + 1);
      continue;
    }
    const n = e.kind === "silence-expired" ? renewals.get(key) : undefined;
    out.push(row(n ? { ...e, detail: { ...e.detail, renewals: n } } : e));
  }
  return out;
}

function row(e: RolloutEventEntry): BesideEvent {
  const d = e.detail;
  const reason = typeof d["reason"] === "string"
    ? d["reason"]
    : typeof d["after"] === "string"
    ? d["after"]
    : null;
  return {
    at: e.atMs,
    node: e.node,
    kind: e.kind,
    reason,
    detail: describe(e.kind, d),
    actor: e.actor,
  };
}

function describe(kind: string, d: Readonly<Record<string, unknown>>): string {
  if (kind === "resume") return `resumed after ${String(d["after"] ?? "a hold")}`;
  if (typeof d["detail"] === "string") return d["detail"];
  const parts = Object.entries(d).filter(([k]) => k !== "reason")
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return parts.join(", ");
}

/** The plan's maintenance window as the report states it. */
export type WindowLine =
  | { readonly state: "open" | "next"; readonly opensAtMs: number; readonly closesAtMs: number }
  | { readonly state: "none" };

function windowSentence(w: WindowLine): string {
  if (w.state === "none") {
    return "**Maintenance window:** none of the plan's windows opens within a year.";
  }
  return w.state === "open"
    ? `**Maintenance window:** open since ${iso(w.opensAtMs)}, closes ${iso(w.closesAtMs)}.`
    : `**Maintenance window:** next opens ${iso(w.opensAtMs)}, closes ${iso(w.closesAtMs)}.`;
}

/** The section; empty when nothing was recorded beside the steps and the plan has no window. */
export function besideSection(
  events: readonly BesideEvent[],
  lim: RenderLimits,
  window?: WindowLine,
): string[] {
  if (events.length === 0 && !window) return [];
  const head = ["## Holds and events beside the steps", ""];
  if (window) head.push(windowSentence(window), "");
  if (events.length === 0) return [...head, "_No hold, stall or silence was recorded._"];
  const p = pick(events, lim.tableRows, (e) => e.kind !== "resume");
  return [
    ...head,
    ...tableHead(["At", "Node", "Event", "Reason", "Detail"]),
    ...p.shown.map((e) =>
      tableRow([
        iso(e.at),
        e.node === null ? "cluster" : codeSpan(e.node),
        e.kind === "hold" || e.kind === "stall" ? `**${e.kind}**` : e.kind,
        e.reason ? codeSpan(e.reason) : "",
        text(e.detail, lim.textMax),
      ])
    ),
    ...omittedLine(p, "events"),
  ];
}

/** One hook stage of one node, with its Job's observed outcome. */
export interface HookRow {
  readonly at: number;
  readonly node: string;
  readonly stage: string;
  readonly hook: string;
  readonly job: string;
  /** `succeeded`, `failed`, `unresolved` or `not-sent`. */
  readonly outcome: string;
  readonly detail: string;
}

/** The node hooks the journal recorded (their phase facts), in time order. */
export function hookRows(h: PlanHistory | undefined): HookRow[] {
  const rows: HookRow[] = [];
  for (const op of h?.operations ?? []) {
    for (const p of op.phases) {
      if (p.kind !== "fact" || (p.phase !== "pre-hook" && p.phase !== "post-hook")) continue;
      const d = p.detail;
      rows.push({
        at: p.atMs,
        node: op.machine,
        stage: String(d["stage"] ?? p.phase),
        hook: String(d["hook"] ?? ""),
        job: String(d["job"] ?? ""),
        outcome: String(d["outcome"] ?? "unknown"),
        detail: String(d["detail"] ?? ""),
      });
    }
  }
  // Post hooks a step owed and could not send itself (docs/operating.md#node-hooks).
  for (const o of h?.hookObligations ?? []) {
    if (o.state === "owed") {
      rows.push({
        at: o.owedAtMs,
        node: o.node,
        stage: "post (owed)",
        hook: o.hook,
        job: "",
        outcome: "post hook owed",
        detail: "its pre hook was attempted; sent once the operation is settled, before " +
          "anything else on the node",
      });
    } else if (o.state === "claimed" || o.state === "discharged") {
      rows.push({
        at: o.dischargedAtMs ?? o.claimedAtMs ?? o.owedAtMs,
        node: o.node,
        stage: "post (owed)",
        hook: o.hook,
        job: o.jobRef ?? "",
        outcome: o.outcome ?? "claimed, no outcome recorded",
        detail: o.detail ??
          `claimed by ${o.claimedBy ?? "?"}: its Job may have been created; never sent again`,
      });
    }
  }
  return rows.sort((a, b) => a.at - b.at);
}

/** The node hooks section; empty when the plan has none. */
export function hookSection(rows: readonly HookRow[], lim: RenderLimits): string[] {
  if (rows.length === 0) return [];
  const p = pick(rows, lim.tableRows, (r) => r.outcome !== "succeeded");
  return [
    "## Node hooks",
    "",
    ...tableHead(["At", "Node", "Stage", "Hook", "Job", "Outcome", "Detail"]),
    ...p.shown.map((r) =>
      tableRow([
        iso(r.at),
        codeSpan(r.node),
        r.stage,
        codeSpan(r.hook),
        codeSpan(r.job),
        r.outcome === "succeeded" ? "succeeded" : `**${r.outcome}**`,
        text(r.detail, lim.textMax),
      ])
    ),
    ...omittedLine(p, "hook runs"),
  ];
}

/** What a plan declares beside its node steps, for the reviewer (preview report). */
export interface OperatingPlan {
  readonly window?: WindowLine;
  readonly breakpoints: readonly string[];
  readonly hooks: readonly string[];
  readonly noise: readonly string[];
  readonly expectedStepMinutes?: number;
}

/** The preview's "Operating beside the cluster" section; empty when the plan declares nothing. */
export function operatingSection(o: OperatingPlan | undefined): string[] {
  if (!o) return [];
  const list = (label: string, items: readonly string[]) =>
    items.length ? [`- ${label}:`, ...items.map((i) => `  - ${text(i, 300)}`)] : [];
  return [
    "## Operating beside the cluster",
    "",
    ...(o.window ? [windowSentence(o.window), ""] : []),
    ...(o.expectedStepMinutes !== undefined
      ? [`- Expected node step: ${o.expectedStepMinutes} minutes (the window must have this left).`]
      : []),
    ...list("Breakpoints (the rollout holds until a signed continuation)", o.breakpoints),
    ...list("Node hooks (Jobs before/after each node step)", o.hooks),
    ...list("Expected noise (silenced on the node while its step runs)", o.noise),
  ];
}
