/**
 * The execution report's "Holds and events beside the steps" section (docs/operating.md): every
 * hold before a commitment (a closed window, a freeze, a breakpoint) with why and until when, its
 * resume, stalls noticed while a step waited, silences created and expired, hooks and
 * notifications. Pure: journal history in, lines out; every outside string escaped.
 */
import { codeSpan, tableHead, tableRow } from "./escape.ts";
import { iso, omittedLine, pick, text } from "./format.ts";
import type { RenderLimits } from "./model.ts";
import type { PlanHistory } from "../ports/journal_history.ts";

/** One recorded event beside the node steps. */
export interface BesideEvent {
  readonly at: number;
  readonly node: string | null;
  /** `hold`, `resume`, `stall`, `silence-created`, `silence-expired`, `notification`. */
  readonly kind: string;
  readonly reason: string | null;
  readonly detail: string;
  readonly actor: string;
}

/** The plan's rollout events as report rows. */
export function besideEvents(h: PlanHistory | undefined): BesideEvent[] {
  return (h?.rolloutEvents ?? []).map((e) => {
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
  });
}

function describe(kind: string, d: Readonly<Record<string, unknown>>): string {
  if (kind === "resume") return `resumed after ${String(d["after"] ?? "a hold")}`;
  if (typeof d["detail"] === "string") return d["detail"];
  const parts = Object.entries(d).filter(([k]) => k !== "reason")
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return parts.join(", ");
}

/** The section; empty when nothing was recorded beside the steps. */
export function besideSection(events: readonly BesideEvent[], lim: RenderLimits): string[] {
  if (events.length === 0) return [];
  const p = pick(events, lim.tableRows, (e) => e.kind !== "resume");
  return [
    "## Holds and events beside the steps",
    "",
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
