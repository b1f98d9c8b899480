/**
 * Health rounds as a reviewer reads them: one line per binding, every failing or unreadable run
 * of rounds explained (which binding, why, and what happened next), and the per-round detail
 * folded away. Rendering only: round and result verdicts come from the journal as recorded.
 */
import { codeSpan, tableHead, tableRow } from "./escape.ts";
import { clock, countBy, duration, iso, omittedLine, pick, text } from "./format.ts";
import type { HealthCheckResult, HealthRound, RenderLimits } from "./model.ts";
import type { Verdict } from "../domain/verdict.ts";
import { verdictWord } from "./sections.ts";

/** A binding's verdict within one round: its worst result (it may read several objects). */
function bindingVerdict(results: readonly HealthCheckResult[]): Verdict {
  if (results.some((x) => x.verdict === "fail")) return "fail";
  if (results.some((x) => x.verdict === "unreadable")) return "unreadable";
  return "pass";
}

/** Results grouped by binding, in first-seen order. */
function byBinding(results: readonly HealthCheckResult[]): Map<string, HealthCheckResult[]> {
  const m = new Map<string, HealthCheckResult[]>();
  for (const x of results) m.set(x.binding, [...(m.get(x.binding) ?? []), x]);
  return m;
}

function roundLabel(r: HealthRound): string {
  return `${r.purpose}${r.node === undefined ? " (cluster)" : ` on ${codeSpan(r.node)}`}`;
}

/** One row per binding: how often it was read, how it went, and its last result. */
export function bindingSummary(rounds: readonly HealthRound[], lim: RenderLimits): string[] {
  const rows = new Map<string, { verdicts: Verdict[]; last: HealthRound }>();
  for (const r of rounds) {
    for (const [binding, results] of byBinding(r.results)) {
      const row = rows.get(binding) ?? { verdicts: [], last: r };
      row.verdicts.push(bindingVerdict(results));
      row.last = r;
      rows.set(binding, row);
    }
  }
  const all = [...rows];
  const notable = ([, row]: (typeof all)[number]) => row.verdicts.some((v) => v !== "pass");
  const p = pick(all, lim.tableRows, notable);
  return [
    ...tableHead(["Binding", "Rounds", "Pass", "Fail", "Unreadable", "Last result"]),
    ...p.shown.map(([binding, row]) => {
      const n = (v: Verdict) => row.verdicts.filter((x) => x === v).length;
      const last = row.verdicts.at(-1)!;
      return tableRow([
        text(binding, 120),
        String(row.verdicts.length),
        String(n("pass")),
        n("fail") ? `**${n("fail")}**` : "0",
        n("unreadable") ? `**${n("unreadable")}**` : "0",
        `${verdictWord(last)} (${roundLabel(row.last)}, ${iso(row.last.startedAt)})`,
      ]);
    }),
    ...omittedLine(p, "bindings"),
  ];
}

/** A maximal run of non-passing rounds of one purpose on one node, and the round after it. */
interface FailureRun {
  readonly rounds: HealthRound[];
  readonly next?: HealthRound;
}

/** Groups the non-passing rounds into runs per purpose and node, each with what followed. */
export function failureRuns(rounds: readonly HealthRound[]): FailureRun[] {
  const series = new Map<string, HealthRound[]>();
  for (const r of rounds) {
    const key = `${r.purpose}\u0000${r.node ?? ""}`;
    series.set(key, [...(series.get(key) ?? []), r]);
  }
  const runs: FailureRun[] = [];
  for (const list of series.values()) {
    let open: HealthRound[] = [];
    for (const r of list) {
      if (r.verdict !== "pass") {
        open.push(r);
        continue;
      }
      if (open.length) runs.push({ rounds: open, next: r });
      open = [];
    }
    if (open.length) runs.push({ rounds: open });
  }
  return runs.sort((a, b) => a.rounds[0]!.startedAt - b.rounds[0]!.startedAt);
}

/** Which bindings did not pass in a run, and the reason codes they gave. */
function whyLine(run: FailureRun, lim: RenderLimits): string {
  const seen = new Map<string, { verdict: Verdict; reasons: Set<string>; objects: number }>();
  for (const r of run.rounds) {
    for (const [binding, results] of byBinding(r.results)) {
      const v = bindingVerdict(results);
      if (v === "pass") continue;
      const bad = results.filter((x) => x.verdict !== "pass");
      const e = seen.get(binding) ?? { verdict: v, reasons: new Set<string>(), objects: 0 };
      for (const x of bad) if (x.reason) e.reasons.add(x.reason);
      e.objects = Math.max(e.objects, bad.length);
      if (v === "fail") e.verdict = "fail";
      seen.set(binding, e);
    }
  }
  if (seen.size === 0) return "no binding result recorded a failure";
  return [...seen].map(([binding, e]) => {
    const reasons = [...e.reasons].map((x) => codeSpan(x)).join(", ");
    // The journal records the binding's verdict on each object it read, not a verdict per
    // object: say how many it read, never that each of them failed.
    const over = e.objects > 1 ? `, reading ${e.objects} objects` : "";
    return `${text(binding, 120)} ${e.verdict === "fail" ? "failed" : "unreadable"}` +
      `${reasons || over ? ` (${reasons}${over})` : ""}`;
  }).slice(0, lim.tableRows).join("; ");
}

/** One sentence per run: which binding failed, why, and what happened next. */
export function failureExplanations(rounds: readonly HealthRound[], lim: RenderLimits): string[] {
  const runs = failureRuns(rounds);
  const p = pick(runs, lim.tableRows, (r) => r.next === undefined);
  return [
    ...p.shown.map((run) => {
      const first = run.rounds[0]!;
      const count = run.rounds.length === 1 ? "1 round" : `${run.rounds.length} rounds`;
      const what = run.rounds.every((r) => r.verdict === "unreadable")
        ? "unreadable"
        : "did not pass";
      const next = run.next
        ? `the ${first.purpose} held ${
          duration(run.next.startedAt - first.startedAt)
        }, then passed at ${iso(run.next.startedAt)}.`
        : `**no passing ${first.purpose} round followed** (last at ${
          iso(run.rounds.at(-1)!.endedAt)
        }).`;
      return `- ${roundLabel(first)}: ${count} ${what} from ${iso(first.startedAt)} (${
        whyLine(run, lim)
      }); ${next}`;
    }),
    ...omittedLine(p, "failing runs"),
  ];
}

/** Health rounds: per-binding summary, failures explained, per-round detail folded. */
export function healthSection(rounds: readonly HealthRound[], lim: RenderLimits): string[] {
  if (rounds.length === 0) return ["## Health rounds", "", "_No health round recorded._"];
  const notable = (r: HealthRound) => r.verdict !== "pass";
  const totals = countBy(rounds, (r) => r.verdict).map(([v, n]) => `${n} ${v}`).join(", ");
  const explained = failureExplanations(rounds, lim);
  const p = pick(rounds, lim.tableRows, notable);
  // One detail block per run of rounds that did not pass (its last round): the rounds of a run
  // read the same bindings, and the run's explanation above already counts them.
  const detailed = pick(
    failureRuns(rounds).map((r) => r.rounds.at(-1)!),
    lim.detailBlocks,
    () => true,
  );
  const lastPass = [...rounds].reverse().find((r) => !notable(r));
  return [
    "## Health rounds",
    "",
    `${rounds.length} rounds: ${totals}. A round passes only when every bound check passed within it.`,
    "",
    ...bindingSummary(rounds, lim),
    ...(explained.length
      ? ["", "Rounds that did not pass, and what happened next:", "", ...explained]
      : []),
    "",
    "<details>",
    `<summary>All ${rounds.length} rounds (times UTC on ${
      iso(rounds[0]!.startedAt).slice(0, 10)
    } unless dated); the results of the last round of each run that did not pass, and of the ` +
    "latest passing round</summary>",
    "",
    ...tableHead(["Round", "Purpose", "Node", "Started", "Verdict", "Pass", "Fail", "Unreadable"]),
    ...p.shown.map((r) => {
      const c = (v: string) => String(r.results.filter((x) => x.verdict === v).length);
      return tableRow([
        codeSpan(r.id),
        r.purpose,
        r.node === undefined ? "cluster" : codeSpan(r.node),
        clock(r.startedAt, rounds[0]!.startedAt),
        verdictWord(r.verdict),
        c("pass"),
        c("fail"),
        c("unreadable"),
      ]);
    }),
    ...omittedLine(p, "rounds"),
    ...detailed.shown.flatMap((r) => roundDetails(r, lim)),
    // The latest passing round's evidence too: what "pass" was read from, object by object.
    ...(lastPass ? roundDetails(lastPass, lim) : []),
    ...(detailed.omitted > 0
      ? [
        "",
        `_Details of ${detailed.omitted} more runs of failing or unreadable rounds are in the journal._`,
      ]
      : []),
    "",
    "</details>",
  ];
}

/** Evidence listed per binding inside a round's detail before the rest is only counted. */
const OBJECTS_LISTED = 3;

/**
 * One round's results, one row per binding with the objects it read. In a non-passing round only
 * the bindings that did not pass are listed; passing results are counted (all are in the journal).
 */
function roundDetails(r: HealthRound, lim: RenderLimits): string[] {
  const listed = r.verdict === "pass" ? r.results : r.results.filter((x) => x.verdict !== "pass");
  const p = pick([...byBinding(listed)], lim.resultsPerRound, () => true);
  const unlisted = r.results.length - listed.length;
  const node = r.node === undefined ? "" : ` on ${codeSpan(r.node)}`;
  return [
    "",
    `Round ${codeSpan(r.id)} (${r.purpose}${node}): ${r.verdict}, ${iso(r.startedAt)} to ${
      iso(r.endedAt)
    }${unlisted ? `; ${unlisted} passing results not listed` : ""}.`,
    "",
    ...tableHead(["Binding", "Verdict", "Results", "Evidence"]),
    ...p.shown.map(([binding, results]) => {
      const reasons = [...new Set(results.map((x) => x.reason).filter((x) => x !== undefined))];
      const shown = results.slice(0, OBJECTS_LISTED).map((x) => text(x.evidence, lim.textMax));
      const more = results.length > OBJECTS_LISTED
        ? [`${results.length - OBJECTS_LISTED} more`]
        : [];
      return tableRow([
        text(binding, 120),
        `${verdictWord(bindingVerdict(results))}${
          reasons.length ? ` ${reasons.map((x) => codeSpan(x)).join(", ")}` : ""
        }`,
        String(results.length),
        [...shown, ...more].join("; "),
      ]);
    }),
    ...omittedLine(p, "bindings"),
  ];
}
