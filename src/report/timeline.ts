/** The per-node timeline: a Mermaid gantt chart, a node table and folded per-node details. */
import { codeSpan, escapeText, ganttLabel, tableHead, tableRow } from "./escape.ts";
import { countBy, duration, ganttDate, iso, omittedLine, pick, text } from "./format.ts";
import type { NodeTimeline, PhaseOutcome, PhaseSpan, RenderLimits } from "./model.ts";

const TAG: Readonly<Record<PhaseOutcome, string>> = {
  ok: "done, ",
  failed: "crit, ",
  unresolved: "crit, active, ",
  running: "active, ",
  skipped: "",
};

/** True when a node needs a reader's attention. */
export function isNotableNode(n: NodeTimeline): boolean {
  return n.state !== "completed" && n.state !== "pending";
}

/** Start and end of a node's work, or undefined when it has no phases. */
function spanOf(n: NodeTimeline, now: number): { start: number; end: number } | undefined {
  if (n.phases.length === 0) return undefined;
  const start = Math.min(...n.phases.map((p) => p.startedAt));
  const end = Math.max(...n.phases.map((p) => p.endedAt ?? now));
  return { start, end };
}

function bar(label: string, tag: string, id: number, start: number, end: number): string {
  const seconds = Math.max(1, Math.round((end - start) / 1000));
  return `    ${label} :${tag}t${id}, ${ganttDate(start)}, ${seconds}s`;
}

/** The gantt chart; per-phase bars for small rollouts, one bar per node for large ones. */
export function ganttChart(
  nodes: readonly NodeTimeline[],
  now: number,
  lim: RenderLimits,
): string[] {
  const lines = ["```mermaid", "gantt", "    title Node timeline (UTC)"];
  lines.push("    dateFormat YYYY-MM-DD HH:mm:ss", "    axisFormat %H:%M");
  let id = 0;
  const started = nodes.filter((n) => n.phases.length > 0);
  let shown = started.length;
  if (started.length <= lim.ganttPhaseNodes) {
    for (const n of started) {
      lines.push(`    section ${ganttLabel(n.node)}`);
      for (const p of n.phases) {
        lines.push(bar(ganttLabel(p.phase), TAG[p.outcome], ++id, p.startedAt, p.endedAt ?? now));
      }
    }
  } else {
    const p = pick(started, lim.ganttBars, isNotableNode);
    shown = p.shown.length;
    lines.push("    section Nodes");
    for (const n of p.shown) {
      const s = spanOf(n, now)!;
      const tag = n.state === "completed" ? "done, " : isNotableNode(n) ? "crit, " : "active, ";
      lines.push(bar(ganttLabel(n.node), tag, ++id, s.start, s.end));
    }
  }
  lines.push("```");
  if (started.length === 0) return ["_No node work has started._"];
  const note = shown < started.length
    ? [`_The chart shows ${shown} of ${started.length} nodes (those needing attention first)._`]
    : [];
  return [...lines, ...(note.length ? ["", ...note] : [])];
}

/** Node table with outcome counts. */
export function nodeTable(
  nodes: readonly NodeTimeline[],
  now: number,
  lim: RenderLimits,
): string[] {
  const counts = countBy(nodes, (n) => n.state).map(([s, c]) => `${c} ${s}`).join(", ");
  const p = pick(nodes, lim.tableRows, isNotableNode);
  return [
    `${nodes.length} nodes: ${counts}.`,
    "",
    ...tableHead(["Node", "Role", "State", "Phases", "Started", "Took"]),
    ...p.shown.map((n) => {
      const s = spanOf(n, now);
      return tableRow([
        codeSpan(n.node),
        n.role,
        isNotableNode(n) ? `**${n.state}**` : n.state,
        String(n.phases.length),
        s ? iso(s.start) : "not started",
        s ? duration(s.end - s.start) : "",
      ]);
    }),
    ...omittedLine(p, "nodes"),
  ];
}

/** Folded per-node phase details, for nodes needing attention first. */
export function nodeDetails(
  nodes: readonly NodeTimeline[],
  now: number,
  lim: RenderLimits,
): string[] {
  const started = nodes.filter((n) => n.phases.length > 0);
  const p = pick(started, lim.detailBlocks, isNotableNode);
  const blocks = p.shown.flatMap((n) => [
    "",
    "<details>",
    `<summary>${escapeText(n.node)}: ${n.state}, ${n.phases.length} phases</summary>`,
    "",
    ...(n.note ? [text(n.note, lim.textMax), ""] : []),
    ...tableHead(["Phase", "Started", "Ended", "Took", "Outcome"]),
    ...n.phases.map((ph: PhaseSpan) =>
      tableRow([
        escapeText(ph.phase),
        iso(ph.startedAt),
        ph.endedAt === undefined ? "running" : iso(ph.endedAt),
        duration((ph.endedAt ?? now) - ph.startedAt),
        ph.outcome === "ok" ? "ok" : `**${ph.outcome}**`,
      ])
    ),
    "",
    "</details>",
  ]);
  const more = p.omitted > 0
    ? ["", `_Phase details of ${p.omitted} more nodes are in the journal._`]
    : [];
  return [...blocks, ...more];
}
