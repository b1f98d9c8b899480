/**
 * What the journal records beside a plan's node steps (docs/operating.md): cluster freezes and
 * rollout events (holds, resumes, stalls, silences, notifications). Both are events on the
 * hash-chained timeline and nothing else: a freeze's state is its cluster's last
 * `cluster-freeze` / `cluster-unfreeze` event, so there is no second copy to disagree with it.
 */
import type { Kysely, Transaction } from "kysely";
import type { ClusterFreezeInput, RolloutEventInput } from "../../ports/journal.ts";
import type { ClusterFreezeEntry, RolloutEventEntry } from "../../ports/journal_history.ts";
import { appendEvent } from "./hash_chain.ts";
import { assertCurrentEpoch, type Ctx } from "./context.ts";
import { actorText, fail } from "./rows.ts";
import { COMPONENT_END_EVENT } from "../../domain/component/outcome.ts";
import type { EventTable, JournalDB } from "./schema.ts";

const FREEZE_KINDS = ["cluster-freeze", "cluster-unfreeze"];

/** Records a cluster freeze or unfreeze; automation never does either. */
export async function clusterFreezeTx(ctx: Ctx, input: ClusterFreezeInput): Promise<void> {
  if (input.actor.role === "controller") fail("RoleNotPermitted", "automation cannot freeze");
  if (!input.frozen && input.actor.role !== "approver") {
    fail("RoleNotPermitted", "only an approver unfreezes");
  }
  if (input.frozen && input.reason.trim() === "") {
    fail("UsageInvalid", "a freeze needs a reason");
  }
  await appendEvent(ctx.tx, {
    atMs: input.nowMs,
    kind: input.frozen ? "cluster-freeze" : "cluster-unfreeze",
    epoch: ctx.inst.epoch,
    actor: actorText(input.actor),
    body: { cluster: input.cluster, reason: input.reason },
  });
}

/** The cluster's last freeze or unfreeze (inside a transaction or not). */
export async function readClusterFreeze(
  db: Kysely<JournalDB> | Transaction<JournalDB>,
  cluster: string,
): Promise<ClusterFreezeEntry | undefined> {
  const rows = await db.selectFrom("events").selectAll().where("kind", "in", FREEZE_KINDS)
    .orderBy("seq", "desc").execute();
  for (const e of rows) {
    const b = body(e);
    if (b["cluster"] !== cluster) continue;
    return {
      cluster,
      frozen: e.kind === "cluster-freeze",
      reason: typeof b["reason"] === "string" ? b["reason"] : "",
      actor: e.actor,
      atMs: e.at_ms,
      seq: e.seq,
    };
  }
  return undefined;
}

/**
 * Appends one rollout event; one carrying a superseded epoch is refused, and so is a second
 * ComponentUpgrade end of a plan (`ComponentEndRecorded`): replicas of one epoch hold no operation
 * token between them, so each may observe the delivery on its own, and the plan's end is the
 * first journaled, never a second replica's different reading beside it.
 */
export async function rolloutEventTx(ctx: Ctx, input: RolloutEventInput): Promise<number> {
  assertCurrentEpoch(ctx, input.epoch);
  if (input.kind === COMPONENT_END_EVENT) {
    const first = (await readRolloutEvents(ctx.tx, input.planDigest))
      .find((e) => e.kind === COMPONENT_END_EVENT);
    if (first) {
      fail(
        "ComponentEndRecorded",
        `plan ${input.planDigest} already has its end journaled (${
          String(first.detail["end"])
        }, seq ${first.seq}, by ${first.actor}); a plan has one end`,
      );
    }
  }
  return await appendEvent(ctx.tx, {
    atMs: input.nowMs,
    kind: "rollout-event",
    machine: input.node,
    epoch: ctx.inst.epoch,
    actor: actorText(input.actor),
    body: { ...input.detail, plan: input.planDigest, node: input.node, event: input.kind },
  });
}

/** The plan's rollout events, in timeline order. */
export async function readRolloutEvents(
  db: Transaction<JournalDB> | Kysely<JournalDB>,
  digest: string,
): Promise<RolloutEventEntry[]> {
  const rows = await db.selectFrom("events").selectAll().where("kind", "=", "rollout-event")
    .orderBy("seq").execute();
  const out: RolloutEventEntry[] = [];
  for (const e of rows) {
    const b = body(e);
    if (b["plan"] !== digest) continue;
    const { plan: _p, node: _n, event, ...detail } = b;
    out.push({
      seq: e.seq,
      atMs: e.at_ms,
      node: e.machine,
      kind: typeof event === "string" ? event : "unknown",
      actor: e.actor,
      detail,
    });
  }
  return out;
}

function body(e: EventTable): Record<string, unknown> {
  try {
    const v = JSON.parse(e.body);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
