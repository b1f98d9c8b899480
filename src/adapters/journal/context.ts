/** What every journal act receives inside its write transaction. */
import { type Transaction } from "kysely";
import { canTransition, isTerminal, type OperationState } from "../../domain/operation.ts";
import type { IdSource } from "../../ports/clock.ts";
import type { OwnerToken } from "../../ports/journal.ts";
import { appendEvent } from "./hash_chain.ts";
import { shape } from "./compiled.ts";
import { allAccounted, fail, loadAttempts, nextRevision, tokenText } from "./rows.ts";
import type { InstallationTable, JournalDB, OperationTable } from "./schema.ts";

/** The transaction, the installation row as read inside it, ids and the crash-test hook. */
export interface Ctx {
  readonly tx: Transaction<JournalDB>;
  readonly inst: InstallationTable;
  readonly ids: IdSource;
  readonly point: (name: string) => Promise<void>;
}

/**
 * Refuses an act carrying the epoch its writer started in when that epoch is no longer the
 * journal's (a recovery entry or a journal restore came since): the writer is a fenced controller
 * and must record nothing more. An act without one (`cairn recover`, an operator's command) acts
 * in the current epoch by design.
 */
export function assertCurrentEpoch(ctx: Ctx, epoch: string | undefined): void {
  if (epoch !== undefined && epoch !== ctx.inst.epoch) {
    fail(
      "EpochSuperseded",
      `epoch ${epoch} is not the current epoch ${ctx.inst.epoch}; restart the process`,
    );
  }
}

/** Refuses a caller whose epoch is not current or whose token no longer owns `op`. */
export function assertOwner(ctx: Ctx, op: OperationTable, t: OwnerToken): void {
  if (t.epoch !== ctx.inst.epoch) {
    fail("EpochSuperseded", `epoch ${t.epoch} is not the current epoch; restart the process`, {
      operation: op.id,
    });
  }
  if (op.owner !== t.owner || op.owner_gen !== t.gen || op.owner_epoch !== t.epoch) {
    fail(
      "OwnerFenced",
      `operation ${op.id} is owned by ${op.owner}/${op.owner_gen}@${op.owner_epoch}, ` +
        `not ${tokenText(t)}`,
      { operation: op.id },
    );
  }
}

const MOVE = shape(
  ["to", "id", "from"],
  (tx, p: { to: string; id: string; from: string }) =>
    tx.updateTable("operations").set({ state: p.to }).where("id", "=", p.id)
      .where("state", "=", p.from),
);
const MOVE_OWNED = shape(
  ["to", "id", "from", "owner", "gen", "epoch", "current"],
  (tx, p: {
    to: string;
    id: string;
    from: string;
    owner: string;
    gen: number;
    epoch: string;
    current: string;
  }) =>
    tx.updateTable("operations").set({ state: p.to }).where("id", "=", p.id)
      .where("state", "=", p.from).where("owner", "=", p.owner).where("owner_gen", "=", p.gen)
      .where("owner_epoch", "=", p.epoch).where("owner_epoch", "=", p.current),
);

/**
 * Moves `op` to `to` with one conditional UPDATE (state, and owner/generation/epoch when a token
 * is given), after checking ER's table and that a terminal state never leaves an attempt
 * unaccounted. Writes the transition event. Returns the event revision.
 */
export async function move(
  ctx: Ctx,
  a: {
    op: OperationTable;
    to: OperationState;
    token: OwnerToken | null;
    actor: string;
    reason: string;
    nowMs: number;
  },
): Promise<number> {
  const from = a.op.state as OperationState;
  if (!canTransition(from, a.to)) {
    fail("TransitionIllegal", `operation ${a.op.id}: ${from} → ${a.to} is not an ER transition`, {
      operation: a.op.id,
      from,
      to: a.to,
    });
  }
  // ER: scope and slot are released only on a terminal state, and never while an attempt is
  // unaccounted. Every path into a terminal state passes here; this is the one place it is checked.
  if (isTerminal(a.to) && !allAccounted(await loadAttempts(ctx.tx, a.op.id))) {
    fail(
      "TransitionIllegal",
      `operation ${a.op.id}: every attempt must be accounted for before ${a.to}; ` +
        "an attempt is unaccounted, the scope stays held",
    );
  }
  const moved = a.token
    ? await MOVE_OWNED.affected(ctx.tx, {
      to: a.to,
      id: a.op.id,
      from,
      owner: a.token.owner,
      gen: a.token.gen,
      epoch: a.token.epoch,
      current: ctx.inst.epoch,
    })
    : await MOVE.affected(ctx.tx, { to: a.to, id: a.op.id, from });
  if (moved !== 1n) fail("OwnerFenced", `operation ${a.op.id} changed underneath`);
  await ctx.point(`transition:${from}->${a.to}`);
  return await machineEvent(ctx, {
    machine: a.op.machine,
    kind: "transition",
    operationId: a.op.id,
    actor: a.actor,
    body: { from, to: a.to, reason: a.reason },
    nowMs: a.nowMs,
  });
}

/** Appends an event on `machine`'s timeline with a fresh revision. */
export async function machineEvent(
  ctx: Ctx,
  a: {
    machine: string;
    kind: string;
    operationId?: string | null;
    actor: string;
    body: Record<string, unknown>;
    nowMs: number;
  },
): Promise<number> {
  const { revision, head } = await nextRevision(ctx.tx, a.machine);
  await appendEvent(ctx.tx, {
    atMs: a.nowMs,
    kind: a.kind,
    machine: a.machine,
    revision,
    operationId: a.operationId ?? null,
    epoch: ctx.inst.epoch,
    actor: a.actor,
    body: a.body,
  }, head);
  return revision;
}
