/**
 * Many seeds, and what a failing one leaves behind: the seed, the invariant, and a shrunk fault
 * schedule (events removed one at a time while the same invariant still fails) that replays with
 * `deno task dst --seed S`.
 */
import { INVARIANTS } from "./invariants.ts";
import { runSeed, type SeedOptions, type SeedResult } from "./run_seed.ts";
import { describeEvent, type DstEvent } from "./schedule.ts";

export interface Failure {
  readonly result: SeedResult;
  /** The smallest schedule found that still fails the same way. */
  readonly shrunk: readonly DstEvent[];
}

export interface CampaignReport {
  readonly seeds: number;
  readonly failures: readonly Failure[];
  readonly wallMs: number;
  /** Ends of the last controller's rollout, by kind (how much each seed got through). */
  readonly ends: Readonly<Record<string, number>>;
  readonly violations: number;
}

/** How a result failed: an invariant number, `error`, or undefined when it held. */
export function failureKey(r: SeedResult): string | undefined {
  if (r.violation) return `invariant ${r.violation.invariant}`;
  if (r.error) return "error";
  return undefined;
}

/** Removes events while the run still fails the same way; returns the smallest schedule. */
export async function shrink(
  base: Omit<SeedOptions, "events">,
  failing: SeedResult,
): Promise<readonly DstEvent[]> {
  const key = failureKey(failing);
  let events = [...failing.events];
  let progress = true;
  while (progress) {
    progress = false;
    for (let i = 0; i < events.length; i++) {
      const fewer = events.filter((_, j) => j !== i);
      const r = await runSeed({ ...base, events: fewer });
      if (failureKey(r) === key) {
        events = fewer;
        progress = true;
        break;
      }
    }
  }
  return events;
}

/** Runs `seeds` seeds from `first`; failing seeds are shrunk. `onSeed` sees every result. */
export async function runCampaign(o: {
  readonly first: number;
  readonly seeds: number;
  readonly catalogue: Uint8Array;
  readonly variant?: SeedOptions["variant"];
  readonly profile?: SeedOptions["profile"];
  readonly shrinkFailures?: boolean;
  readonly onSeed?: (r: SeedResult) => void;
  /** Stop at the first failure (tests); default run every seed. */
  readonly stopAtFirst?: boolean;
}): Promise<CampaignReport> {
  const t0 = performance.now();
  const failures: Failure[] = [];
  const ends: Record<string, number> = {};
  let ran = 0;
  for (let seed = o.first; seed < o.first + o.seeds; seed++) {
    const base = {
      seed,
      catalogue: o.catalogue,
      ...(o.variant ? { variant: o.variant } : {}),
      ...(o.profile ? { profile: o.profile } : {}),
    };
    const r = await runSeed(base);
    ran++;
    o.onSeed?.(r);
    const end = r.end ?? (r.violation ? "violation" : r.error ? "error" : "none");
    ends[end] = (ends[end] ?? 0) + 1;
    if (failureKey(r)) {
      const shrunk = o.shrinkFailures === false ? r.events : await shrink(base, r);
      failures.push({ result: r, shrunk });
      if (o.stopAtFirst) break;
    }
  }
  return {
    seeds: ran,
    failures,
    wallMs: performance.now() - t0,
    ends,
    violations: failures.length,
  };
}

/** The printout of one failure: seed, invariant, the shrunk schedule and how to replay it. */
export function describeFailure(f: Failure): string {
  const r = f.result;
  const head = r.violation
    ? `seed ${r.seed}: invariant ${r.violation.invariant} (${
      INVARIANTS[r.violation.invariant]
    }) at +${r.violation.atMs} ms: ${r.violation.detail}`
    : `seed ${r.seed}: error: ${r.error}`;
  return [
    head,
    `  cluster ${r.nodes} nodes, plan ${r.planNodes.join(" → ")}`,
    `  shrunk schedule (${f.shrunk.length} of ${r.events.length} events):`,
    ...(f.shrunk.length
      ? f.shrunk.map((e) => `    - ${describeEvent(e)}`)
      : ["    (none: the seed fails without faults)"]),
    `  replay: deno task dst --seed ${r.seed}`,
  ].join("\n");
}
