/**
 * `cairn status`: what is running, waiting and unresolved, and why, read from the journal
 * (the system of record) through its typed read models rather than from a live reconciler.
 */
import { holdsScope, isInFlight, type OperationState } from "../domain/operation.ts";
import type { Journal, OperationRecord } from "../ports/journal.ts";
import type { OperationHistory, PlanEntry } from "../ports/journal_history.ts";
import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, openForReading } from "./journal_common.ts";
import { nextWindow } from "../domain/ops/window.ts";
import { safeParsePlan } from "../domain/plan/parse.ts";
import { isOperatedPlan } from "../domain/plan/schema.ts";
import { COMPONENT_END_EVENT, type ComponentOutcome } from "../domain/component/outcome.ts";

/** One operation in flight. */
export interface RunningEntry {
  readonly operationId: string;
  readonly planName: string;
  readonly planDigest: string;
  readonly machine: string;
  readonly step: string;
  readonly state: OperationState;
  readonly attemptsUsed: number;
}

/** One operation a human (or a recovery observation) must resolve. */
export interface UnresolvedEntry extends RunningEntry {
  readonly why: readonly string[];
}

/** One plan step with no operation yet. */
export interface WaitingEntry {
  readonly planName: string;
  readonly planDigest: string;
  readonly machine: string;
  readonly step: string;
  readonly why: string;
}

/** A cluster with live plans: its freeze, its plans' next window, its last hold and stall. */
export interface ClusterEntry {
  readonly cluster: string;
  readonly frozen?: { readonly by: string; readonly reason: string; readonly atMs: number };
  /** Per live plan that declares windows: the window in force or the next one. */
  readonly nextWindows: ReadonlyArray<
    { readonly planName: string; readonly opensAtMs: number; readonly closesAtMs: number } | {
      readonly planName: string;
      readonly none: string;
    }
  >;
  /** The latest hold or stall recorded beside a live plan's steps. */
  readonly lastEvents: ReadonlyArray<
    {
      readonly planName: string;
      readonly kind: string;
      readonly node: string | null;
      readonly atMs: number;
      readonly detail: string;
    }
  >;
}

/** A post hook a settled (or still held) step owes (docs/operating.md#node-hooks). */
export interface OwedHookEntry {
  readonly operationId: string;
  readonly planName: string;
  readonly planDigest: string;
  readonly machine: string;
  readonly hook: string;
  /** `owed`: not sent yet; `claimed`: admitted once, maybe sent, no outcome recorded. */
  readonly state: "owed" | "claimed";
  readonly sinceMs: number;
}

/** The whole status report (`--output json` prints exactly this). */
export interface StatusReport {
  readonly epoch: string;
  readonly recoveryMode: boolean;
  readonly running: readonly RunningEntry[];
  readonly unresolved: readonly UnresolvedEntry[];
  readonly waiting: readonly WaitingEntry[];
  /** Freezes, next windows, holds and stalls (docs/operating.md). */
  readonly clusters: readonly ClusterEntry[];
  /** Post hooks owed by steps (present only when there is one). */
  readonly owedHooks?: readonly OwedHookEntry[];
  /** ComponentUpgrades (no machine steps): how each observation ended (present when any). */
  readonly components?: readonly ComponentEntry[];
}

/**
 * A ComponentUpgrade as the journal knows it: the end its observation journaled, or none yet
 * (bound and not ended, or its last run refused, unreadable or stopped, which are checked again).
 */
export interface ComponentEntry {
  readonly planName: string;
  readonly planDigest: string;
  readonly end: ComponentOutcome["end"] | "not ended";
  readonly atMs?: number;
  /** Why it did not complete: the first part that did not pass, or the refusal. */
  readonly detail?: string;
}

/** The ComponentUpgrade plans among `plans`, each with its journaled end. */
async function componentEntries(
  j: Journal,
  plans: readonly PlanEntry[],
): Promise<ComponentEntry[]> {
  const out: ComponentEntry[] = [];
  for (const p of plans.filter((x) => x.kind === "ComponentUpgrade")) {
    const e = (await j.planHistory(p.digest))?.rolloutEvents?.find((x) =>
      x.kind === COMPONENT_END_EVENT
    );
    const o = e?.detail["outcome"] as ComponentOutcome | undefined;
    const base = { planName: p.name, planDigest: p.digest };
    if (!e || !o) {
      out.push({ ...base, end: "not ended" });
      continue;
    }
    const stuck = o.delivery?.checks.find((c) => c.verdict !== "pass")?.detail ??
      o.rounds.at(-1)?.outcome.message ?? o.refusal?.detail;
    out.push({
      ...base,
      end: o.end,
      atMs: e.atMs,
      ...(o.end !== "completed" && stuck ? { detail: stuck } : {}),
    });
  }
  return out;
}

const LIVE_PLAN = new Set(["proposed", "approved", "committed"]);

/** Why an unresolved operation is unresolved, from its typed history (never from event JSON). */
function unresolvedWhy(o: OperationHistory | undefined): string[] {
  if (!o) return ["operation detail missing"];
  const why: string[] = [];
  const lastMove = o.transitions.filter((t) => t.to === "unresolved").at(-1);
  const lastTakeover = o.takeovers.filter((t) => t.stateAfter === "unresolved").at(-1);
  if (lastTakeover && (!lastMove || lastTakeover.seq > lastMove.seq)) {
    why.push(`taken over from ${lastTakeover.from}`);
  } else if (lastMove) why.push(`moved to unresolved: ${lastMove.reason}`);
  for (const a of o.attempts.filter((a) => a.accountedBy === null)) {
    why.push(
      `attempt #${a.number} (${a.phase}, sent ${new Date(a.sentAtMs).toISOString()}) is ` +
        `unaccounted: observe the machine and record a recovery decision after the settle floor`,
    );
  }
  if (why.length === 0) {
    why.push("no attempt in doubt: safe-to-retry classification or cancellation");
  }
  return why;
}

function waitingFor(
  plan: PlanEntry,
  ops: readonly OperationRecord[],
  ctx: { recoveryMode: boolean; frozen: Set<string> },
): WaitingEntry[] {
  const slot = ops.find((o) => o.cluster === plan.cluster && holdsScope(o.state));
  let first = true;
  return plan.steps.filter((s) =>
    !ops.some((o) => o.planDigest === plan.digest && o.step === s.step)
  )
    .map((s) => {
      const why = plan.state === "proposed"
        ? "plan awaits approval"
        : ctx.recoveryMode
        ? "recovery mode: gates are closed"
        : ctx.frozen.has(s.machine)
        ? "machine is frozen"
        : slot
        ? `rollout slot of ${plan.cluster} held by ${slot.id} (${slot.machine}, ${slot.state})`
        : first
        ? "next in plan order"
        : "queued behind earlier steps";
      first = false;
      return {
        planName: plan.name,
        planDigest: plan.digest,
        machine: s.machine,
        step: s.step,
        why,
      };
    });
}

/** Builds the status report from the journal's typed read models. */
export async function buildStatus(j: Journal, nowMs = Date.now()): Promise<StatusReport> {
  const inst = await j.installation();
  const ops = await j.listOperations();
  const plans = new Map((await j.listPlans()).map((p) => [p.digest, p]));
  const entry = (o: OperationRecord): RunningEntry => ({
    operationId: o.id,
    planName: plans.get(o.planDigest)?.name ?? "?",
    planDigest: o.planDigest,
    machine: o.machine,
    step: o.step,
    state: o.state,
    attemptsUsed: o.attemptsUsed,
  });
  const unresolved: UnresolvedEntry[] = [];
  for (const o of ops.filter((o) => o.state === "unresolved")) {
    const history = await j.planHistory(o.planDigest);
    const why = unresolvedWhy(history?.operations.find((x) => x.id === o.id));
    unresolved.push({ ...entry(o), why });
  }
  const ctx = { recoveryMode: inst.recoveryMode, frozen: new Set(await j.frozenMachines()) };
  const owedHooks: OwedHookEntry[] = (await j.hookObligations(ops.map((o) => o.id)))
    .flatMap((h) => {
      const o = ops.find((x) => x.id === h.operationId);
      if (!o || (h.state !== "owed" && h.state !== "claimed")) return [];
      return [{
        operationId: h.operationId,
        planName: plans.get(o.planDigest)?.name ?? "?",
        planDigest: o.planDigest,
        machine: h.node,
        hook: h.hook,
        state: h.state,
        sinceMs: h.state === "claimed" ? h.claimedAtMs ?? h.owedAtMs : h.owedAtMs,
      }];
    });
  const components = await componentEntries(j, [...plans.values()]);
  return {
    ...(owedHooks.length > 0 ? { owedHooks } : {}),
    ...(components.length > 0 ? { components } : {}),
    epoch: inst.epoch,
    recoveryMode: inst.recoveryMode,
    running: ops.filter((o) => isInFlight(o.state)).map(entry),
    unresolved,
    waiting: [...plans.values()].filter((p) => LIVE_PLAN.has(p.state))
      .flatMap((p) => waitingFor(p, ops, ctx)),
    clusters: await clusterEntries(
      j,
      [...plans.values()].filter((p) => LIVE_PLAN.has(p.state)),
      nowMs,
    ),
  };
}

/** The operating state of each cluster with live plans, read from the journal and the plans. */
async function clusterEntries(
  j: Journal,
  live: readonly PlanEntry[],
  nowMs: number,
): Promise<ClusterEntry[]> {
  const out: ClusterEntry[] = [];
  for (const cluster of [...new Set(live.map((p) => p.cluster))].sort()) {
    const freeze = await j.clusterFreeze(cluster);
    const nextWindows: ClusterEntry["nextWindows"][number][] = [];
    const lastEvents: ClusterEntry["lastEvents"][number][] = [];
    for (const p of live.filter((x) => x.cluster === cluster)) {
      const record = await j.getPlan(p.digest);
      const parsed = record
        ? await safeParsePlan(new TextEncoder().encode(record.bytes), { file: p.name })
        : undefined;
      const plan = parsed?.ok ? parsed.parsed.plan : undefined;
      if (plan && isOperatedPlan(plan) && plan.spec.windows) {
        const w = nextWindow(plan.spec.windows, nowMs);
        nextWindows.push(
          w
            ? { planName: p.name, opensAtMs: w.opensAtMs, closesAtMs: w.closesAtMs }
            : { planName: p.name, none: "no window within a year" },
        );
      }
      const events = (await j.planHistory(p.digest))?.rolloutEvents ?? [];
      const last = events.filter((e) => e.kind === "hold" || e.kind === "stall").at(-1);
      if (last) {
        lastEvents.push({
          planName: p.name,
          kind: last.kind,
          node: last.node,
          atMs: last.atMs,
          detail: String(last.detail["detail"] ?? last.detail["reason"] ?? ""),
        });
      }
    }
    out.push({
      cluster,
      ...(freeze?.frozen
        ? { frozen: { by: freeze.actor, reason: freeze.reason, atMs: freeze.atMs } }
        : {}),
      nextWindows,
      lastEvents,
    });
  }
  return out;
}

// Names come from plans and the cluster; a terminal must not interpret them.
function safe(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

/** Renders the report as text. */
export function statusText(r: StatusReport): string {
  const plan = (e: { planName: string; planDigest: string }) =>
    `plan ${safe(e.planName)} (${e.planDigest.slice(0, 12)})`;
  const lines = [`epoch ${r.epoch}${r.recoveryMode ? " (RECOVERY MODE: gates closed)" : ""}`];
  lines.push(`running (${r.running.length}):`);
  for (const e of r.running) {
    lines.push(
      `  ${e.operationId}  ${e.state.padEnd(9)} ${safe(e.machine)}  ${
        plan(e)
      }  attempts ${e.attemptsUsed}`,
    );
  }
  lines.push(`unresolved (${r.unresolved.length}):`);
  for (const e of r.unresolved) {
    lines.push(`  ${e.operationId}  ${safe(e.machine)}  ${plan(e)}`);
    for (const w of e.why) lines.push(`    why: ${safe(w)}`);
  }
  lines.push(`waiting (${r.waiting.length}):`);
  for (const e of r.waiting) lines.push(`  ${safe(e.machine)}  ${plan(e)}: ${safe(e.why)}`);
  const iso = (ms: number) => new Date(ms).toISOString();
  if (r.owedHooks) {
    lines.push(`post hooks owed (${r.owedHooks.length}):`);
    for (const h of r.owedHooks) {
      lines.push(
        h.state === "owed"
          ? `  ${h.operationId}  ${safe(h.machine)}  ${plan(h)}: post hook ${
            safe(h.hook)
          } owed since ${iso(h.sinceMs)}; sent once the operation is settled, before anything ` +
            "else on the machine"
          : `  ${h.operationId}  ${safe(h.machine)}  ${plan(h)}: post hook ${
            safe(h.hook)
          } claimed at ${iso(h.sinceMs)}: its Job may have been created, no outcome is ` +
            "recorded; it is never sent again (check the Job)",
      );
    }
  }
  if (r.components) {
    lines.push(`component upgrades (${r.components.length}):`);
    for (const c of r.components) {
      lines.push(
        `  ${plan(c)}: ${c.end}${c.atMs !== undefined ? ` at ${iso(c.atMs)}` : ""}${
          c.detail ? `: ${safe(c.detail)}` : ""
        }`,
      );
    }
  }
  for (const c of r.clusters) {
    lines.push(`cluster ${safe(c.cluster)}:${c.frozen ? "" : " not frozen"}`);
    if (c.frozen) {
      lines.push(
        `  FROZEN by ${safe(c.frozen.by)} at ${iso(c.frozen.atMs)}: ${safe(c.frozen.reason)}`,
      );
    }
    for (const w of c.nextWindows) {
      lines.push(
        "none" in w
          ? `  plan ${safe(w.planName)}: ${w.none}`
          : `  plan ${safe(w.planName)}: window ${iso(w.opensAtMs)} to ${iso(w.closesAtMs)}`,
      );
    }
    for (const e of c.lastEvents) {
      lines.push(
        `  plan ${safe(e.planName)}: ${e.kind} at ${iso(e.atMs)} on ${safe(e.node ?? "cluster")}: ${
          safe(e.detail)
        }`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/** `cairn status`. */
export const command: Command = {
  path: ["status"],
  summary: "Show what is running, waiting and unresolved, and why",
  usage: "--journal URL [--output json]",
  help: `Reads the journal and lists operations in flight, operations that are unresolved (with
the attempts that need a recovery decision) and plan steps still waiting (with what they wait
for: approval, recovery mode, a frozen machine or the cluster's rollout slot). Exit 0 whenever the
journal could be read; the report itself says whether anything needs a human.

${JOURNAL_HELP}`,
  options: { ...OUTPUT_OPTION, ...JOURNAL_OPTION },
  async run(args, io) {
    const j = await openForReading(args, io);
    try {
      const report = await buildStatus(j);
      if (wantsJson(args)) printJson(io, report);
      else io.stdout(statusText(report));
      return EXIT.ok;
    } finally {
      await j.close();
    }
  },
};
