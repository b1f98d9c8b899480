// deno-lint-ignore-file no-console
/**
 * The deterministic simulation campaign (docs/dst.md): seeded runs of the real executor against
 * the in-process twin with drawn clusters, plans and fault schedules, the invariants checked
 * after every step.
 *
 *   deno task dst --seeds N [--first F]   run seeds F..F+N-1 (default F = 1)
 *   deno task dst --seed S                replay one seed, printing its schedule and end
 *   deno task dst --seed S --events JSON  replay it with this schedule (a shrunk one, as printed)
 *   deno task dst ... --profile ci        the small worlds CI's fixed budget runs (3–6 nodes)
 *   deno task dst ... --kind K            run plan kind K on every seed (TalosUpgrade,
 *                                         KubernetesUpgrade, ConfigApply, ComponentUpgrade)
 *                                         instead of the drawn one
 *   deno task dst ... --nodes N           resize every drawn world to N nodes (speed of one size)
 *   deno task dst --seeds N --results F   also write each seed's result to F, one JSON line a
 *                                         seed (end, states, violation, write points, schedule):
 *                                         two builds' files compare seed by seed
 *   deno task dst --soak [--minutes M]    keep running fresh seeds (from --first) until M minutes
 *                                         pass (default: until interrupted), progress every 500;
 *                                         after each batch, a crash sweep of a 7-node rollout
 *   deno task dst --crash-sweep [--seed S]  the 7-node world of seed S (default 1) killed at each
 *                                         of its journal write points in turn, a successor after
 *
 * Exit code 1 when any seed violates an invariant (each printed with its shrunk schedule).
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { crashSweep, describeFailure, pinnedNodes, runCampaign } from "../src/app/dst/campaign.ts";
import { runSeed } from "../src/app/dst/run_seed.ts";
import { describeEvent, type DstEvent } from "../src/app/dst/schedule.ts";

const USAGE = `usage: deno task dst --seeds N [--first F] [--profile full|ci] [--kind K] [--nodes N]
                     [--results FILE]
       deno task dst --seed S [--events JSON]
       deno task dst --soak [--minutes M]
       deno task dst --crash-sweep [--seed S]
(docs/dst.md)`;

function parseOptions() {
  try {
    return parseArgs({
      args: Deno.args,
      options: {
        seeds: { type: "string" },
        seed: { type: "string" },
        first: { type: "string", default: "1" },
        soak: { type: "boolean", default: false },
        minutes: { type: "string" },
        profile: { type: "string", default: "full" },
        "crash-sweep": { type: "boolean", default: false },
        events: { type: "string" },
        kind: { type: "string" },
        nodes: { type: "string" },
        results: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (e) {
    // An unknown or malformed option: say which, and how the command is used (no stack trace).
    console.error(`dst: ${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    Deno.exit(2);
  }
}

/** A schedule as a failing seed prints it: a JSON array of events. */
function parseEvents(text: string): DstEvent[] {
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v)) return v as DstEvent[];
  } catch (e) {
    console.error(`dst: --events is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(2);
  }
  console.error("dst: --events must be a JSON array of events, as a failing seed prints it");
  Deno.exit(2);
}

const { values } = parseOptions();
if (values.help) {
  console.log(USAGE);
  Deno.exit(0);
}
for (const name of ["seeds", "seed", "first", "minutes", "nodes"] as const) {
  const v = values[name];
  if (v !== undefined && !/^\d+$/.test(v)) {
    console.error(`dst: --${name} must be a whole number, not ${JSON.stringify(v)}\n${USAGE}`);
    Deno.exit(2);
  }
}

if (values.profile !== "full" && values.profile !== "ci") {
  console.error(`--profile must be full or ci, not ${values.profile}`);
  Deno.exit(2);
}
const profile = values.profile;
const shape = values.nodes !== undefined ? { shape: pinnedNodes(Number(values.nodes)) } : {};
const catalogue = await Deno.readFile(new URL("../catalogue/talos.yaml", import.meta.url));
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

if (values["crash-sweep"]) {
  const t0 = performance.now();
  const sweep = await crashSweep({ seed: Number(values.seed ?? "1"), catalogue });
  for (const f of sweep.failures) console.log(describeFailure(f));
  console.log(
    `crash sweep: seed ${sweep.seed}, 7 nodes, clean run ${sweep.clean}, ${sweep.points} write points, ` +
      `${sweep.failures.length} violations, ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
      `successors' ends ${JSON.stringify(sweep.ends)}`,
  );
  Deno.exit(sweep.failures.length > 0 ? 1 : 0);
}

if (values.seed !== undefined) {
  const events = values.events !== undefined ? parseEvents(values.events) : undefined;
  const r = await runSeed({
    seed: Number(values.seed),
    catalogue,
    profile,
    ...(values.kind ? { kind: values.kind } : {}),
    ...shape,
    ...(events ? { events } : {}),
  });
  console.log(`seed ${r.seed}: ${r.nodes} nodes, ${r.kind} plan ${r.planNodes.join(" → ")}`);
  for (const e of r.events) console.log(`  - ${describeEvent(e)}`);
  console.log(
    `  end: ${r.end ?? "none"}${r.reason ? ` (${r.reason})` : ""}; states ${
      JSON.stringify(r.states)
    }`,
  );
  console.log(
    `  virtual ${(r.virtualMs / 60_000).toFixed(1)} min, ${r.writePoints} journal write points`,
  );
  if (r.violation || r.error) {
    const { shrink } = await import("../src/app/dst/campaign.ts");
    const shrunk = await shrink({
      seed: r.seed,
      catalogue,
      profile,
      ...(values.kind ? { kind: values.kind } : {}),
      ...shape,
    }, r);
    console.log(describeFailure({ result: r, shrunk }));
    Deno.exit(1);
  }
  Deno.exit(0);
}

const first = Number(values.first);
const minutes = values.minutes !== undefined ? Number(values.minutes) : undefined;
const seeds = values.soak ? Number.MAX_SAFE_INTEGER : Number(values.seeds ?? "100");
const deadline = minutes !== undefined ? performance.now() + minutes * 60_000 : Infinity;
const cpu0 = cpuMs();
const wall0 = performance.now();
let ran = 0;
let stop = false;
if (values.soak) Deno.addSignalListener("SIGINT", () => (stop = true));
const results: string[] | undefined = values.results !== undefined && !values.soak ? [] : undefined;
const report = await runCampaign({
  first,
  seeds: values.soak ? 1 : seeds,
  catalogue,
  profile,
  ...(values.kind ? { kind: values.kind } : {}),
  ...shape,
  onSeed: (r) => {
    ran++;
    results?.push(JSON.stringify(r));
    if (r.violation || r.error) console.log(`seed ${r.seed} failed; shrinking`);
    if (ran % 500 === 0) {
      const s = (performance.now() - wall0) / 1000;
      console.log(`progress: ${ran} seeds, ${s.toFixed(0)} s, ${(ran / s).toFixed(1)} seeds/s`);
    }
  },
}).then(async (one) => {
  if (!values.soak) return one;
  // Soak: batches of 500 until the deadline or an interrupt, reporting as it goes.
  const all = { ...one, failures: [...one.failures], ends: { ...one.ends } };
  let next = first + 1;
  while (!stop && performance.now() < deadline) {
    const b = await runCampaign({
      first: next,
      seeds: 500,
      catalogue,
      profile,
      ...(values.kind ? { kind: values.kind } : {}),
      ...shape,
      onSeed: () => ran++,
    });
    for (const [k, v] of Object.entries(b.ends)) all.ends[k] = (all.ends[k] ?? 0) + v;
    // The crash campaign on a whole 7-node rollout, killed at each of its write points.
    const sweep = await crashSweep({ seed: next, catalogue, onRun: () => ran++ });
    all.failures.push(...sweep.failures);
    for (const f of sweep.failures) console.log(describeFailure(f));
    console.log(
      `soak: crash sweep of seed ${next}: ${sweep.points} points, ${sweep.failures.length} violations`,
    );
    all.failures.push(...b.failures);
    for (const f of b.failures) console.log(describeFailure(f));
    next += 500;
    const s = (performance.now() - wall0) / 1000;
    console.log(
      `soak: ${ran} seeds, ${all.failures.length} violations, ${(ran / s).toFixed(1)} seeds/s`,
    );
  }
  return { ...all, seeds: ran, wallMs: performance.now() - wall0 };
});
const wallS = (performance.now() - wall0) / 1000;
if (results) await Deno.writeTextFile(values.results!, results.join("\n") + "\n");
if (!values.soak) { for (const f of report.failures) console.log(describeFailure(f)); }
console.log(
  `dst: ${ran} seeds (${first}..${first + ran - 1}), ${report.failures.length} violations, ` +
    `${wallS.toFixed(1)} s, ${(ran / wallS).toFixed(1)} seeds/s, CPU ${
      ((cpuMs() - cpu0) / ran).toFixed(0)
    } ms/seed`,
);
console.log(`ends: ${JSON.stringify(report.ends)}`);
Deno.exit(report.failures.length > 0 ? 1 : 0);
