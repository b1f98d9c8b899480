/**
 * `cairn status`: what is running, waiting and unresolved, and why, read from the journal
 * (the system of record) rather than from a live reconciler.
 */
import { holdsScope, type OperationState } from "../domain/operation.ts";
import type { Journal, JournalEvent, OperationRecord, PlanRecord } from "../ports/journal.ts";
import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, openForReading } from "./journal_common.ts";

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

/** The whole status report (`--output json` prints exactly this). */
export interface StatusReport {
  readonly epoch: string;
  readonly recoveryMode: boolean;
  readonly running: readonly RunningEntry[];
  readonly unresolved: readonly UnresolvedEntry[];
  readonly waiting: readonly WaitingEntry[];
}

const RUNNING: readonly OperationState[] = ["committed", "sending", "verifying"];
const LIVE_PLAN = new Set(["proposed", "approved", "committed"]);

function body(e: JournalEvent): Record<string, unknown> {
  try {
    const v = JSON.parse(e.body);
    return typeof v === "object" && v !== null ? v : {};
  } catch {
    return {};
  }
}

async function unresolvedWhy(j: Journal, op: OperationRecord): Promise<string[]> {
  const d = await j.showOperation(op.id);
  if (!d) return ["operation detail missing"];
  const why: string[] = [];
  const last = [...d.events].reverse().find((e) =>
    (e.kind === "transition" && body(e)["to"] === "unresolved") ||
    (e.kind === "ownership" && body(e)["stateAfter"] === "unresolved")
  );
  if (last?.kind === "transition") why.push(`moved to unresolved: ${String(body(last)["reason"])}`);
  if (last?.kind === "ownership") why.push(`taken over from ${String(body(last)["from"])}`);
  for (const a of d.attempts.filter((a) => a.accountedBy === null)) {
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

function frozenMachines(events: readonly JournalEvent[]): Set<string> {
  const frozen = new Set<string>();
  for (const e of events) {
    if (e.machine === null) continue;
    if (e.kind === "freeze") frozen.add(e.machine);
    if (e.kind === "unfreeze") frozen.delete(e.machine);
  }
  return frozen;
}

function waitingFor(
  plan: PlanRecord,
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

/** Builds the status report from a journal. */
export async function buildStatus(j: Journal): Promise<StatusReport> {
  const inst = await j.installation();
  const ops = await j.listOperations();
  const events = await j.events();
  const digests = [
    ...new Set(events.filter((e) => e.kind === "plan").map((e) => body(e)["digest"])),
  ]
    .filter((d): d is string => typeof d === "string");
  const plans = new Map<string, PlanRecord>();
  for (const d of digests) {
    const p = await j.getPlan(d);
    if (p) plans.set(d, p);
  }
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
    unresolved.push({ ...entry(o), why: await unresolvedWhy(j, o) });
  }
  const ctx = { recoveryMode: inst.recoveryMode, frozen: frozenMachines(events) };
  return {
    epoch: inst.epoch,
    recoveryMode: inst.recoveryMode,
    running: ops.filter((o) => RUNNING.includes(o.state)).map(entry),
    unresolved,
    waiting: [...plans.values()].filter((p) => LIVE_PLAN.has(p.state))
      .flatMap((p) => waitingFor(p, ops, ctx)),
  };
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
