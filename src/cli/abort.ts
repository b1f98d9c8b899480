import type { Journal, OperationRecord } from "../ports/journal.ts";
import { isTerminal } from "../domain/operation.ts";
import { CairnError } from "../domain/errors.ts";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, journalLocation } from "./journal_common.ts";

/** What abort did to one operation of the plan. */
export interface AbortEffect {
  readonly operation: string;
  readonly node: string;
  readonly before: string;
  readonly after: string;
  readonly note: string;
}

/** Finds a plan by name or digest among the journal's recorded plans. */
async function resolvePlan(
  journal: Journal,
  ref: string,
): Promise<{ digest: string; name: string }> {
  const hit = (await journal.listPlans()).find((p) => p.digest === ref || p.name === ref);
  if (!hit) {
    throw new CairnError({
      reason: "OperationNotFound",
      message: `no plan named or with digest ${ref} in the journal`,
    });
  }
  return hit;
}

/**
 * Abort is not undo (docs/recovery.md#abort-is-not-undo): it revokes the plan's future authority,
 * cancels operations that never recorded an attempt (ER's no-attempt cancellation), and leaves
 * every operation with an attempt exactly as its evidence says — usually `unresolved`, scope held,
 * facts kept. Restoring schedulability or replacing an image are separate, explicitly authorised
 * acts.
 */
export async function abortPlan(
  journal: Journal,
  o: { readonly plan: string; readonly actor: string; readonly nowMs: number },
): Promise<{ digest: string; name: string; effects: AbortEffect[] }> {
  const plan = await resolvePlan(journal, o.plan);
  const actor = { identity: o.actor, role: "approver" as const };
  const record = await journal.getPlan(plan.digest);
  if (record && (record.state === "proposed" || record.state === "approved")) {
    await journal.endPlan(plan.digest, "revoked", actor, o.nowMs);
  }
  const effects: AbortEffect[] = [];
  const ops = (await journal.listOperations()).filter((op) => op.planDigest === plan.digest);
  for (const op of ops) effects.push(await settle(journal, op, o));
  return { ...plan, effects };
}

async function settle(
  journal: Journal,
  op: OperationRecord,
  o: { readonly actor: string; readonly nowMs: number },
): Promise<AbortEffect> {
  const base = { operation: op.id, node: op.machine, before: op.state };
  if (isTerminal(op.state)) return { ...base, after: op.state, note: "already terminal" };
  const detail = await journal.showOperation(op.id);
  if ((detail?.attempts.length ?? 0) > 0) {
    return {
      ...base,
      after: op.state,
      note: "attempts recorded: kept for accounting (abort is not undo)",
    };
  }
  const after = await journal.cancelNoAttempt(
    op.id,
    "plan-revoked",
    { identity: o.actor, role: "approver" },
    o.nowMs,
  );
  return {
    ...base,
    after: after.state,
    note: "no attempt ever recorded: cancelled, scope released",
  };
}

export const command: Command = {
  path: ["abort"],
  summary: "Revoke a plan's future authority; keep every attempt's accounting (abort is not undo)",
  usage: "PLAN --journal URL --actor PRINCIPAL [--output json]",
  help: `PLAN is the plan's name or digest. The plan is revoked in the journal, so no new commitment
or attempt can pass; operations that never recorded an attempt are cancelled (their scope is
released); operations with attempts keep their state and facts until evidence or a recovery
decision accounts for them ('cairn recover'). Nothing is sent to the cluster.

Options:
${JOURNAL_HELP}
  --actor PRINCIPAL   who aborts (recorded on the timeline)
  --output json       machine-readable result`,
  options: { ...JOURNAL_OPTION, ...OUTPUT_OPTION, actor: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const actor = args.values["actor"];
    if (typeof actor !== "string" || actor === "") {
      throw new UsageError("--actor PRINCIPAL is required");
    }
    const { openJournalForAbort } = await import("../app/abort_run.ts");
    const journal = await openJournalForAbort(journalLocation(args, io), Date.now());
    try {
      const r = await abortPlan(journal, { plan: args.positionals[0]!, actor, nowMs: Date.now() });
      if (wantsJson(args)) printJson(io, r);
      else {
        io.stdout(`plan ${r.name} (sha256:${r.digest}) revoked\n`);
        for (const e of r.effects) {
          io.stdout(`  ${e.node}  ${e.operation}  ${e.before} → ${e.after}  ${e.note}\n`);
        }
      }
      return EXIT.ok;
    } finally {
      await journal.close();
    }
  },
};
