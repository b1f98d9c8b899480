// deno-lint-ignore-file no-console
/**
 * Execution report of a 500-node rollout with 10,000 recorded attempts: render time (median of
 * N renders in one process, after one warm-up) and size of `renderExecutionReport`, next to
 * `JSON.stringify` of the same model measured in the same run (the cheapest faithful dump of
 * the same data). Goal: ≤ 500 ms and ≤ 1 MB. The model is built directly (test/report fixtures,
 * with 20 attempts per node: retried pulls, installs and reboots, a few transport failures and
 * target errors among them, and one lost reboot that stays unaccounted).
 *
 *   deno run -A bench/report_render_bench.ts [--runs N]
 */
import { parseArgs } from "node:util";
import { executionModel } from "../test/report/_fixtures.ts";
import { renderExecutionReport } from "../src/report/render_execution.ts";
import type { AttemptAccount, ExecutionReportModel } from "../src/report/model.ts";
import type { Phase } from "../src/domain/operation.ts";

const GOAL_MS = 500;
const GOAL_BYTES = 1024 * 1024;
const NODES = 500;
const ATTEMPTS = 10_000;
const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
const RUNS = Number(values.runs ?? 7);

/** The fixture's 500-node execution, with its attempts replaced by 10,000 (20 per node). */
function model(): ExecutionReportModel {
  const base = executionModel(NODES);
  const perNode = ATTEMPTS / NODES;
  const phases: readonly Phase[] = ["pull", "install", "reboot"];
  const attempts: AttemptAccount[] = [];
  base.nodes.forEach((n, i) => {
    const start = n.phases[0]!.startedAt;
    for (let k = 0; k < perNode; k++) {
      const phase = phases[k % phases.length]!;
      const at = start + k * 20_000;
      const lost = i === base.nodes.length - 1 && k === perNode - 1;
      // Every 7th attempt of a node failed on the wire and was retried; every 97th overall
      // came back as a target error: notable rows the report must keep in sight.
      const responseClass = lost
        ? "lost" as const
        : (i * perNode + k) % 97 === 0
        ? "target-error" as const
        : k % 7 === 6
        ? "transport-failure" as const
        : "accepted" as const;
      attempts.push({
        node: n.node,
        phase,
        attempt: Math.floor(k / phases.length) + 1,
        intentAt: at,
        sentAt: at + 50,
        transportDeadline: at + 30_000,
        verificationDeadline: at + 30 * 60_000,
        responseClass,
        accountedBy: lost ? null : responseClass === "transport-failure" ? "recovery" : "response",
        ...(responseClass === "accepted" ? {} : { detail: `${responseClass} on attempt ${k}` }),
      });
    }
  });
  return { ...base, attempts };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median ms of `RUNS` calls of `f`, after one call that warms it up; and that call's result. */
function time(f: () => string): { ms: number; firstMs: number; out: string } {
  const t0 = performance.now();
  const out = f();
  const firstMs = performance.now() - t0;
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    f();
    xs.push(performance.now() - t);
  }
  return { ms: median(xs), firstMs, out };
}

const m = model();
const enc = new TextEncoder();
// Interleaving would not help here: both run in this one process, one after the other.
const json = time(() => JSON.stringify(m));
const md = time(() => renderExecutionReport(m));
const jsonBytes = enc.encode(json.out).length;
const mdBytes = enc.encode(md.out).length;
const kb = (b: number) => `${(b / 1024).toFixed(0)} KB`;
console.log(
  `execution report: ${m.nodes.length} nodes, ${m.attempts.length} attempts, ` +
    `${m.healthRounds.length} health rounds; ${RUNS} renders (median, after a warm-up)`,
);
console.log(
  `  JSON.stringify(model) (baseline)  ${json.ms.toFixed(1).padStart(7)} ms  ` +
    `(first ${json.firstMs.toFixed(1)} ms)  ${kb(jsonBytes)}`,
);
console.log(
  `  renderExecutionReport             ${md.ms.toFixed(1).padStart(7)} ms  ` +
    `(first ${md.firstMs.toFixed(1)} ms)  ${kb(mdBytes)}`,
);
console.log(
  `  ratio: ${(md.ms / json.ms).toFixed(2)}x JSON.stringify time, ` +
    `${(mdBytes / jsonBytes).toFixed(3)}x its size`,
);
const worst = Math.max(md.ms, md.firstMs);
console.log(
  `  render ${worst.toFixed(0)} ms (slowest of median and first): ` +
    `${worst <= GOAL_MS ? "within" : "ABOVE"} goal of ${GOAL_MS} ms; ` +
    `size ${kb(mdBytes)}: ${mdBytes <= GOAL_BYTES ? "within" : "ABOVE"} goal of 1 MB`,
);
