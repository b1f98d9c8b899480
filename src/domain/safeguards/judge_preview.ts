/**
 * Preview rows judged from what the zero-write preview saw: the health round's per-binding
 * results by reader kind (rows 13–18), the write guard's count (row 4) and the installer
 * resolution (10). Rows placed only at execution or observation are
 * marked as such; they never decide a preview. Pure.
 */
import { type InstallerRecord, judgeInstallers } from "./judge_installer.ts";
import { HEALTH_ROWS, rowOfReader } from "./reader_rows.ts";
import { type Judged, type RowResult, rowResult } from "./result.ts";
import { type SafeguardId, SAFEGUARDS } from "./table.ts";
import type { Verdict } from "../verdict.ts";

/** One result of the preview's health round. */
export interface PreviewResult {
  readonly binding: string;
  readonly reader: string | null;
  readonly outcome: Verdict;
}

/** What the preview saw. */
export interface PreviewRecord {
  /** Whether the preview reached the cluster at all. */
  readonly connected: boolean;
  readonly rounds: ReadonlyArray<{
    readonly verdict: Verdict;
    readonly results: readonly PreviewResult[];
  }>;
  /** Rows the live checks judged directly (identity, drain planning, the round's verdict). */
  readonly live?: readonly RowResult[];
  /**
   * Mutating calls the read-only guard refused during the preview, and what was read; absent
   * when the guard's count is unknown (the previewer failed outside it).
   */
  readonly writes?: { readonly count: number; readonly evidence: string };
  /** Every hop's installer resolution the preview made (none: not resolved). */
  readonly installers?: readonly InstallerRecord[];
  /**
   * What the cluster-identity check found when it did not pass (another cluster, or unreadable).
   * Then what the live checks and the health round read describes a cluster that is not (or not
   * known to be) the plan's: none of it passes a row.
   */
  readonly otherCluster?: string;
}

const SEVERITY: Readonly<Record<RowResult["verdict"], number>> = {
  fail: 4,
  unreadable: 3,
  "not-evaluated": 2,
  pass: 1,
  "not-applicable": 0,
};

/** The worse of two judgements of one row, with both evidences. */
function worse(a: RowResult, b: RowResult): RowResult {
  const [w] = SEVERITY[a.verdict] >= SEVERITY[b.verdict] ? [a, b] : [b, a];
  return {
    ...w,
    evidence: a.evidence === b.evidence ? a.evidence : `${a.evidence}; ${b.evidence}`,
  };
}

/** Every preview row the preview itself judges. */
export function judgePreview(p: PreviewRecord): RowResult[] {
  const live = new Map((p.live ?? []).map((r) => [r.id, r]));
  const health = healthRows(p).map((r) => {
    const l = live.get(r.id);
    live.delete(r.id);
    return l ? worse(l, r) : r;
  });
  const observed = [...live.values(), ...health].map((r) =>
    p.otherCluster !== undefined && r.verdict === "pass"
      ? {
        id: r.id,
        verdict: "not-evaluated" as const,
        evidence: `read from a cluster that is not the plan's (${p.otherCluster}): ${r.evidence}`,
      }
      : r
  );
  return [
    ...observed,
    rowResult("PreviewReadOnly", readOnly(p)),
    rowResult(
      "InstallerImageExists",
      judgeInstallers(p.installers ?? []),
    ),
    ...SAFEGUARDS.filter((s) => !s.placement.includes("P")).map((s) =>
      rowResult(s.id, {
        verdict: "not-evaluated",
        evidence: `placed at ${s.placement.join("/")}: judged from the journal during execution`,
      })
    ),
  ];
}

function readOnly(p: PreviewRecord): Judged {
  if (p.writes === undefined) {
    return {
      verdict: "unreadable",
      evidence: "the preview failed before its read-only guard's count could be read",
      reason: "SafeguardUnreadable",
    };
  }
  if (p.writes.count > 0) {
    return {
      verdict: "fail",
      evidence: `the read-only guard refused ${p.writes.count} mutating call(s); nothing was sent`,
      reason: "PreviewWriteRefused",
    };
  }
  return { verdict: "pass", evidence: p.writes.evidence };
}

function healthRows(p: PreviewRecord): RowResult[] {
  return HEALTH_ROWS.map(([id, readers]) => rowResult(id, healthRow(p, id, readers)));
}

function healthRow(p: PreviewRecord, id: SafeguardId, readers: string): Judged {
  if (!p.connected) return { verdict: "not-evaluated", evidence: "no cluster connection" };
  if (p.rounds.length === 0) {
    return { verdict: "not-evaluated", evidence: "no health round ran (no policy to read)" };
  }
  const mine = p.rounds.flatMap((r) =>
    r.results.filter((x) => x.reader !== null && rowOfReader(x.reader) === id)
  );
  if (mine.length === 0) {
    return { verdict: "not-evaluated", evidence: `the policy binds no ${readers} reader` };
  }
  const names = [...new Set(mine.map((x) => x.binding))].join(", ");
  if (mine.some((x) => x.outcome === "fail")) {
    return {
      verdict: "fail",
      evidence: `${names} failed in the preview round`,
      reason: "GateFailed",
    };
  }
  if (mine.some((x) => x.outcome === "unreadable")) {
    return {
      verdict: "unreadable",
      evidence: `${names} unreadable in the preview round`,
      reason: "SafeguardUnreadable",
    };
  }
  return { verdict: "pass", evidence: `${names} (${readers}) passed in the live preview round` };
}

/** A node's running schematic as the preview read it (undefined: not published or unread). */
export interface RunningSchematic {
  readonly node: string;
  readonly schematic: string | undefined;
}

/**
 * Row 2 at preview: every node's running schematic is known, every intermediate hop keeps it, and
 * the last hop pins its own. An unknown running schematic is unreadable (the plan cannot bind
 * what it preserves); an intermediate hop that would replace it fails.
 */
export function judgeRunningSchematics(
  hops: readonly { readonly to: string; readonly schematic: string }[],
  running: readonly RunningSchematic[],
): Judged {
  const unknown = running.filter((r) => r.schematic === undefined).map((r) => r.node);
  if (unknown.length) {
    return {
      verdict: "unreadable",
      evidence: `no running schematic read from ${unknown.join(", ")}`,
      reason: "SafeguardUnreadable",
    };
  }
  const intermediate = hops.slice(0, -1);
  const replaced = running.flatMap((r) =>
    intermediate.filter((h) => h.schematic !== r.schematic).map((h) =>
      `${r.node}: the hop to ${h.to} installs schematic ${h.schematic.slice(0, 12)}… over the ` +
      `running ${r.schematic!.slice(0, 12)}…`
    )
  );
  if (replaced.length) {
    return { verdict: "fail", evidence: replaced.join("; "), reason: "SafeguardViolated" };
  }
  const kinds = [...new Set(running.map((r) => r.schematic!.slice(0, 12) + "…"))];
  const last = hops.at(-1);
  return {
    verdict: "pass",
    evidence: `${running.length} node(s) run schematic ${kinds.join(", ")}; ` +
      `${intermediate.length} intermediate hop(s) keep it` +
      (last ? `; the last hop pins ${last.schematic.slice(0, 12)}…` : ""),
  };
}
