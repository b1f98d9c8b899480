/**
 * Many seeds, and what a failing one leaves behind: the seed, the invariant, and a shrunk fault
 * schedule (events removed one at a time while the same invariant still fails) that replays with
 * `deno task dst --seed S`.
 */
import { INVARIANTS } from "./invariants.ts";
import { runSeed, type SeedOptions, type SeedResult } from "./run_seed.ts";
import { describeEvent, type DstEvent } from "./schedule.ts";
import type { Shape } from "./world.ts";

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
  /** Every seed runs this plan kind (default: each seed's drawn kind). */
  readonly kind?: string;
  /** Edits every seed's drawn world (`pinnedNodes`). */
  readonly shape?: SeedOptions["shape"];
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
      ...(o.kind ? { kind: o.kind } : {}),
      ...(o.shape ? { shape: o.shape } : {}),
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
  const profile = r.profile === "full" ? "" : ` --profile ${r.profile}`;
  const head = r.violation
    ? `seed ${r.seed}: invariant ${r.violation.invariant} (${
      INVARIANTS[r.violation.invariant]
    }) at +${r.violation.atMs} ms: ${r.violation.detail}`
    : `seed ${r.seed}: error: ${r.error}`;
  return [
    head,
    `  cluster ${r.nodes} nodes, ${r.kind} plan ${r.planNodes.join(" → ")}`,
    `  shrunk schedule (${f.shrunk.length} of ${r.events.length} events):`,
    ...(f.shrunk.length
      ? f.shrunk.map((e) => `    - ${describeEvent(e)}`)
      : ["    (none: the seed fails without faults)"]),
    // The kind named: a seed pinned to another kind replays that way (pinning changes no draw).
    `  replay: deno task dst --seed ${r.seed}${profile} --kind ${r.kind}`,
  ].join("\n");
}

/**
 * The drawn world resized to `n` nodes, the seed's workloads kept (`deno task dst --nodes N`, the
 * speed figures of one size): three control planes from five nodes up (one below), the rest
 * workers; a drawn database's primary moves to the first worker (none with fewer than three hosts,
 * as the draw has it).
 */
export function pinnedNodes(n: number): (s: Shape) => Shape {
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`a world has at least one node, not ${n}`);
  }
  return (s) => {
    const cps = n >= 5 ? 3 : 1;
    const controlPlanes = Array.from({ length: cps }, (_, i) => `cp-${i + 1}`);
    const workers = Array.from({ length: n - cps }, (_, i) => `worker-${i + 1}`);
    const hosts = workers.length >= 3 ? workers : [...workers, ...controlPlanes];
    const databasePrimary = s.databasePrimary === undefined || hosts.length < 3
      ? undefined
      : hosts[0];
    return { ...s, nodes: n, controlPlanes, workers, databasePrimary };
  };
}

/** The 7-node world of the crash sweep: three control planes, four workers, the seed's workloads. */
export const sevenNodes: (s: Shape) => Shape = pinnedNodes(7);

export interface CrashSweep {
  readonly seed: number;
  /** Write points of the clean run: one crash-restart run per point. */
  readonly points: number;
  /** How the clean run ended and its nodes' states. */
  readonly clean: string;
  readonly failures: readonly Failure[];
  /** Ends of the successors' rollouts, by kind. */
  readonly ends: Readonly<Record<string, number>>;
}

/**
 * The crash campaign on a whole 7-node rollout: the first seed from `seed` whose 7-node world
 * completes a plan of all seven nodes runs once without faults to count its journal write points, then once per point with the controller killed there (inside
 * a transaction: rolled back; after a commit: kept) and a successor started at once.
 */
export async function crashSweep(o: {
  readonly seed: number;
  readonly catalogue: Uint8Array;
  readonly onRun?: (r: SeedResult) => void;
}): Promise<CrashSweep> {
  // The first seed from `o.seed` whose 7-node plan covers every node and completes cleanly.
  let base = { seed: o.seed, catalogue: o.catalogue, shape: sevenNodes, kind: "TalosUpgrade" };
  let clean = await runSeed({ ...base, events: [] });
  for (
    let tries = 0;
    tries < 50 && !(clean.planNodes.length === 7 && clean.end === "completed");
    tries++
  ) {
    base = { ...base, seed: base.seed + 1 };
    clean = await runSeed({ ...base, events: [] });
  }
  const failures: Failure[] = [];
  const ends: Record<string, number> = {};
  if (failureKey(clean)) failures.push({ result: clean, shrunk: [] });
  for (let k = 1; k <= clean.writePoints; k++) {
    const events: DstEvent[] = [{ kind: "crash", atPoint: k, restartAfterMs: 0, skewMs: 0 }];
    const r = await runSeed({ ...base, events });
    o.onRun?.(r);
    const end = r.end ?? "none";
    ends[end] = (ends[end] ?? 0) + 1;
    if (failureKey(r)) failures.push({ result: r, shrunk: events });
  }
  const completed = Object.values(clean.states).filter((x) => x === "completed").length;
  const cleanEnd = `${clean.end ?? "none"} (${completed}/${clean.planNodes.length} completed)`;
  return { seed: base.seed, points: clean.writePoints, clean: cleanEnd, failures, ends };
}
