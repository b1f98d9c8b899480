/**
 * Recovery decisions for one operation (docs/recovery.md#the-recovery-table,
 * docs/operation-model.md#classification), as pure functions over what the journal holds. `cairn
 * recover` shows this evidence, then asks the journal (which enforces the same rules again) to
 * record one authorised decision. Resume is not rerun: nothing here ever leads to a second install
 * or reboot.
 */
import { isTerminal, type PostconditionReading } from "../../domain/operation.ts";
import type { AttemptRecord, OperationRecord } from "../../ports/journal.ts";
import type { CordonFact } from "../cordon_ownership.ts";

/** One phase intent or fact with its detail parsed. */
export interface PhaseEntry {
  readonly phase: string;
  readonly kind: string;
  readonly atMs: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** Parses the journal's phase rows (detail is stored as JSON text). */
export function parsePhases(
  rows: ReadonlyArray<{ phase: string; kind: string; atMs: number; detail: string }>,
): PhaseEntry[] {
  return rows.map((r) => {
    let detail: Record<string, unknown> = {};
    try {
      const v = JSON.parse(r.detail);
      if (typeof v === "object" && v !== null) detail = v;
    } catch {
      detail = { raw: r.detail };
    }
    return { phase: r.phase, kind: r.kind, atMs: r.atMs, detail };
  });
}

function lastFact(phases: readonly PhaseEntry[], phase: string): PhaseEntry | undefined {
  return [...phases].reverse().find((p) => p.phase === phase && p.kind === "fact");
}

/** The recorded cordon provenance, if the operation reached its cordon phase. */
export function cordonFactOf(phases: readonly PhaseEntry[]): CordonFact | undefined {
  const f = lastFact(phases, "cordon");
  if (!f) return undefined;
  const rv = f.detail["resourceVersionAfterCordon"];
  return {
    priorUnschedulable: f.detail["priorUnschedulable"] === true,
    cordonedByOperation: f.detail["cordonedByOperation"] === true,
    resourceVersionAfterCordon: typeof rv === "string" ? rv : undefined,
  };
}

/** True when an uncordon of the operation's cordon has already been applied. */
export function alreadyUncordoned(phases: readonly PhaseEntry[]): boolean {
  return phases.some((p) =>
    p.phase === "uncordon" && p.kind === "fact" && p.detail["decision"] === "uncordoned"
  );
}

/** What the drain facts say: pods whose eviction was accepted and pods left at the bound. */
export interface DrainFacts {
  readonly evicted: readonly string[];
  readonly refused: readonly string[];
  readonly remaining: ReadonlyArray<{ pod: string; graceDeadlineMs: number | null }>;
  readonly boundReached: boolean;
}

export function drainFactsOf(phases: readonly PhaseEntry[]): DrainFacts | undefined {
  const drain = phases.filter((p) => p.phase === "drain" && p.kind === "fact");
  if (drain.length === 0) return undefined;
  const evicted: string[] = [];
  const refused: string[] = [];
  let remaining: DrainFacts["remaining"] = [];
  let boundReached = false;
  for (const f of drain) {
    const pod = f.detail["evict"];
    if (typeof pod === "string") {
      const outcome = f.detail["outcome"];
      (outcome === "accepted" || outcome === "gone" ? evicted : refused).push(pod);
    }
    if (f.detail["boundReached"] === true) {
      boundReached = true;
      const list = (f.detail["remaining"] ?? []) as ReadonlyArray<Record<string, unknown>>;
      remaining = list.map((r) => ({
        pod: String(r["pod"]),
        graceDeadlineMs: typeof r["graceDeadlineMs"] === "number" ? r["graceDeadlineMs"] : null,
      }));
    }
  }
  return { evicted, refused, remaining, boundReached };
}

/** The boot the executor observed after its reboot, if any. */
export function bootObservedOf(
  phases: readonly PhaseEntry[],
): { version: string; bootId: string; schematic: string | null } | undefined {
  const f = lastFact(phases, "boot-observed");
  if (!f) return undefined;
  const schematic = f.detail["schematic"];
  return {
    version: String(f.detail["version"]),
    bootId: String(f.detail["bootId"]),
    schematic: typeof schematic === "string" ? schematic : null,
  };
}

/**
 * True when the attempt's executor no longer owns the operation ("taken over" in
 * docs/operation-model.md#accounting-and-the-settle-floor).
 */
export function attemptTakenOver(att: AttemptRecord, op: OperationRecord): boolean {
  return op.ownerGen !== att.ownerGen || op.ownerEpoch !== att.ownerEpoch;
}

/** Where an attempt's settle floor stands (the journal computes the same from the same rows). */
export interface SettleWindow {
  /** When the floor ends; undefined while a start point is still missing. */
  readonly endsAtMs: number | undefined;
  /** What the floor still waits for before it can even start. */
  readonly missing: readonly string[];
}

/**
 * The floor starts at the latest of the attempt's transport deadline, its executor's stop or
 * takeover, and the first successful machine read after that deadline.
 */
export function settleWindow(i: {
  readonly attempt: AttemptRecord;
  readonly operation: OperationRecord;
  readonly ownerSinceMs: number;
  /** `observedAtMs` of every observation recorded for the machine. */
  readonly machineReadsMs: readonly number[];
  readonly executorStoppedAtMs?: number;
  readonly settleFloorMs: number;
}): SettleWindow {
  const deadline = i.attempt.transportDeadlineMs;
  const stop = attemptTakenOver(i.attempt, i.operation) ? i.ownerSinceMs : i.executorStoppedAtMs;
  const reads = i.machineReadsMs.filter((t) => t >= deadline);
  const firstRead = reads.length === 0 ? undefined : Math.min(...reads);
  const missing: string[] = [];
  if (stop === undefined) missing.push("the attempt's executor is neither stopped nor taken over");
  if (firstRead === undefined) missing.push("no machine read since the transport deadline");
  if (stop === undefined || firstRead === undefined) return { endsAtMs: undefined, missing };
  return { endsAtMs: Math.max(deadline, stop, firstRead) + i.settleFloorMs, missing };
}

/** Everything the decisions are computed from. */
export interface RecoveryFacts {
  readonly operation: OperationRecord;
  readonly ownerSinceMs: number;
  readonly attempts: readonly AttemptRecord[];
  readonly phases: readonly PhaseEntry[];
  readonly machineReadsMs: readonly number[];
  /** Recovery actions the plan binds (e.g. `uncordonOwnedCordon`). */
  readonly planRecovery: readonly string[];
  readonly settleFloorMs: number;
  readonly nowMs: number;
}

/** One decision `cairn recover` could record, and whether it is possible now. */
export interface PossibleDecision {
  readonly kind: "account" | "uncordon" | "classify";
  /** The attempt an accounting decision is about. */
  readonly attempt?: string;
  readonly possible: boolean;
  readonly why: string;
  /** Earliest time the decision can pass, when known. */
  readonly possibleAfterMs?: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The accounting decision for one unaccounted attempt. */
export function accountDecision(f: RecoveryFacts, att: AttemptRecord): PossibleDecision {
  const w = settleWindow({
    attempt: att,
    operation: f.operation,
    ownerSinceMs: f.ownerSinceMs,
    machineReadsMs: f.machineReadsMs,
    settleFloorMs: f.settleFloorMs,
  });
  const base = { kind: "account" as const, attempt: att.id };
  if (w.endsAtMs === undefined) {
    // `--account` itself takes the operation over and reads the machine: both start the floor.
    const after = f.nowMs + f.settleFloorMs;
    return {
      ...base,
      possible: false,
      possibleAfterMs: after,
      why: `${w.missing.join("; ")}: --account takes over and reads the machine now, which ` +
        `starts the settle floor; account ${att.id} possible after the settle floor at ` +
        `${iso(after)} at the earliest`,
    };
  }
  if (f.nowMs < w.endsAtMs) {
    return {
      ...base,
      possible: false,
      possibleAfterMs: w.endsAtMs,
      why: `account ${att.id} possible after the settle floor at ${iso(w.endsAtMs)}`,
    };
  }
  return {
    ...base,
    possible: true,
    why: `settle floor ended at ${iso(w.endsAtMs)}; a recovery observation taken now accounts ` +
      `for ${att.id}`,
  };
}

/** Why an uncordon by recovery is not possible, or undefined when the recorded facts allow it. */
export function uncordonRefusal(f: Pick<RecoveryFacts, "operation" | "phases" | "planRecovery">):
  | string
  | undefined {
  if (isTerminal(f.operation.state)) {
    return `operation is ${f.operation.state}: it can no longer act on the node`;
  }
  if (!f.planRecovery.includes("uncordonOwnedCordon")) {
    return "the plan does not bind `recovery: [{action: uncordonOwnedCordon}]`";
  }
  const cordon = cordonFactOf(f.phases);
  if (!cordon) return "no cordon fact is recorded: the operation never cordoned the node";
  if (cordon.priorUnschedulable || !cordon.cordonedByOperation) {
    return "the cordon fact shows the node was not cordoned by this operation";
  }
  if (alreadyUncordoned(f.phases)) return "the operation's cordon was already lifted";
  return undefined;
}

/** Why classification is not possible, or undefined. */
export function classifyRefusal(
  f: Pick<RecoveryFacts, "operation" | "attempts">,
): string | undefined {
  if (f.operation.state !== "unresolved") {
    return `operation is ${f.operation.state}; only an unresolved operation is classified`;
  }
  if (f.attempts.length === 0) {
    return "no attempt was ever recorded: ER's no-attempt cancellation applies, not completion";
  }
  const open = f.attempts.filter((a) => a.accountedBy === null);
  if (open.length > 0) {
    return `attempt(s) ${open.map((a) => `${a.id} (${a.phase})`).join(", ")} unaccounted: ` +
      `account them first (--account)`;
  }
  return undefined;
}

/** Every decision and whether it is possible now, with the reason. */
export function possibleDecisions(f: RecoveryFacts): PossibleDecision[] {
  const out: PossibleDecision[] = [];
  if (!isTerminal(f.operation.state)) {
    for (const a of f.attempts.filter((x) => x.accountedBy === null)) {
      out.push(accountDecision(f, a));
    }
  }
  const u = uncordonRefusal(f);
  out.push({
    kind: "uncordon",
    possible: u === undefined,
    why: u ??
      "the plan authorises it and the operation cordoned the node; --uncordon re-reads the " +
        "node and lifts the cordon only if its ownership evidence is unchanged",
  });
  const c = classifyRefusal(f);
  out.push({
    kind: "classify",
    possible: c === undefined,
    why: c ??
      "every attempt is accounted: a completion observation ordered after the last accounting " +
        "decides completed or failed",
  });
  return out;
}

/**
 * How a completion observation classifies an unresolved operation (never a retry): by its
 * recorded postcondition reading; an unreadable read classifies nothing.
 */
export function classification(o: {
  readonly reading: PostconditionReading;
}): "completed" | "failed" | "unresolved" {
  if (o.reading === "established") return "completed";
  return o.reading === "contradicted" ? "failed" : "unresolved";
}
