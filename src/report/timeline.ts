/** The per-node timeline: a Mermaid gantt chart, a node table and folded per-node details. */
import { codeSpan, escapeText, ganttLabel, tableHead, tableRow } from "./escape.ts";
import { countBy, duration, ganttDate, iso, omittedLine, pick, text } from "./format.ts";
import type { NodeTimeline, PhaseOutcome, PhaseSpan, RenderLimits } from "./model.ts";
import type { Phase } from "../domain/operation.ts";

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

/**
 * The phase groups a reader thinks in: one gantt bar each per node, instead of one per phase
 * (a 7-node rollout has ~70 phases; a chart of 35 bars still shows where the time went).
 */
const PHASE_GROUPS: readonly { readonly name: string; readonly phases: readonly Phase[] }[] = [
  { name: "prepare", phases: ["gate", "pull"] },
  { name: "install", phases: ["install"] },
  { name: "drain", phases: ["cordon", "drain"] },
  { name: "reboot", phases: ["reboot", "boot-observed"] },
  { name: "verify", phases: ["verify", "uncordon", "post-gate"] },
];

/** Worst first: a group shows the outcome that most needs a reader. */
const OUTCOME_RANK: readonly PhaseOutcome[] = ["failed", "unresolved", "running", "ok", "skipped"];

/** One node's phases folded into its phase groups, in group order; empty groups are left out. */
export function phaseGroups(
  n: NodeTimeline,
  now: number,
): { name: string; start: number; end: number; outcome: PhaseOutcome }[] {
  return PHASE_GROUPS.flatMap((g) => {
    const mine = n.phases.filter((p) => g.phases.includes(p.phase));
    if (mine.length === 0) return [];
    const outcome = OUTCOME_RANK.find((o) => mine.some((p) => p.outcome === o)) ?? "skipped";
    return [{
      name: g.name,
      start: Math.min(...mine.map((p) => p.startedAt)),
      end: Math.max(...mine.map((p) => p.endedAt ?? now)),
      outcome,
    }];
  });
}

/** The gantt chart; per phase-group bars for small rollouts, one bar per node for large ones. */
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
      for (const g of phaseGroups(n, now)) {
        lines.push(bar(g.name, TAG[g.outcome], ++id, g.start, g.end));
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

/**
 * Node table with outcome counts: one row per node, with how long each phase group took (the
 * per-phase detail is folded below for the nodes that need attention).
 */
export function nodeTable(
  nodes: readonly NodeTimeline[],
  now: number,
  lim: RenderLimits,
): string[] {
  const counts = countBy(nodes, (n) => n.state).map(([s, c]) => `${c} ${s}`).join(", ");
  const p = pick(nodes, lim.tableRows, isNotableNode);
  const groups = PHASE_GROUPS.map((g) => g.name);
  return [
    `${nodes.length} nodes: ${counts}.`,
    "",
    ...tableHead(["Node", "Role", "State", "Started", "Took", ...groups]),
    ...p.shown.map((n) => {
      const s = spanOf(n, now);
      const mine = new Map(phaseGroups(n, now).map((g) => [g.name, g]));
      return tableRow([
        codeSpan(n.node),
        n.role,
        isNotableNode(n) ? `**${n.state}**` : n.state,
        s ? iso(s.start) : "not started",
        s ? duration(s.end - s.start) : "",
        ...groups.map((name) => {
          const g = mine.get(name);
          if (!g) return "";
          const took = duration(g.end - g.start);
          return g.outcome === "ok" ? took : `${took} **${g.outcome}**`;
        }),
      ]);
    }),
    ...omittedLine(p, "nodes"),
  ];
}

/**
 * Folded per-node phase details, only for the nodes needing attention: a completed node's phases
 * are in the table's phase groups and, mutation by mutation, in the attempts.
 */
export function nodeDetails(
  nodes: readonly NodeTimeline[],
  now: number,
  lim: RenderLimits,
): string[] {
  const started = nodes.filter((n) => n.phases.length > 0 && isNotableNode(n));
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
