/**
 * Owed post hooks (docs/operating.md#node-hooks): "a post hook always runs when its pre hook was
 * attempted". The obligation is recorded on the machine's timeline before the pre hook's attempt
 * (`hook-owed`, carrying the post hook's Job exactly as it will be created and the request digests
 * of both stages), so no crash between the pre hook's send and the post hook's loses it. What it
 * has become is derived, never stored twice:
 *
 * - nothing, while no pre hook attempt (its request digest) is in the journal: nothing to undo;
 * - `sent-in-step`: the step's own post hook attempt (its request digest) is in the journal;
 * - `owed`: the pre hook was attempted and the post hook was not; it blocks the machine's next
 *   commitment (comparison 4, `hook-owed`) and is sent once the operation is terminal;
 * - `claimed`: a controller was admitted to send it (`hook-claimed`, at most one ever) and its
 *   outcome is not recorded yet; it is never sent a second time;
 * - `discharged`: the claimed send and the Job's observed outcome are recorded (`hook-discharged`).
 *
 * The claim is the post hook's admission once the step can no longer attempt anything: it needs a
 * terminal operation (the scope released by the recovery rules or a person), the caller's epoch
 * current, the cluster and the machine not frozen, the machine's recovery scope released when in
 * recovery mode, and the obligation still `owed`, all inside one write transaction, so exactly one
 * controller ever sends it.
 */
import type { Transaction } from "kysely";
import { isTerminal, type OperationState } from "../../domain/operation.ts";
import type {
  HookClaimInput,
  HookClaimResult,
  HookDischargeInput,
  HookOwedInput,
} from "../../ports/journal.ts";
import type { HookObligationEntry } from "../../ports/journal_history.ts";
import { readClusterFreeze } from "./beside.ts";
import { checkGate } from "./comparisons.ts";
import { assertCurrentEpoch, assertOwner, type Ctx, machineEvent } from "./context.ts";
import { fail, loadOperation, tokenText } from "./rows.ts";
import type { EventTable, JournalDB } from "./schema.ts";

type Tx = Transaction<JournalDB>;

const KINDS = ["hook-owed", "hook-claimed", "hook-discharged"];

/** Records the obligation; fenced by the step's owner token. */
export async function hookOwedTx(ctx: Ctx, input: HookOwedInput): Promise<void> {
  const op = await loadOperation(ctx.tx, input.operationId);
  assertOwner(ctx, op, input.token);
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "hook-owed",
    operationId: op.id,
    actor: tokenText(input.token),
    body: {
      hook: input.hook,
      namespace: input.namespace,
      job: input.job,
      timeoutSeconds: input.timeoutSeconds,
      preRequestDigest: input.preRequestDigest,
      postRequestDigest: input.postRequestDigest,
    },
    nowMs: input.nowMs,
  });
}

/** Admits one controller to send an owed post hook; see the module comment. */
export async function hookClaimTx(ctx: Ctx, input: HookClaimInput): Promise<HookClaimResult> {
  if (input.epoch !== ctx.inst.epoch) {
    return { ok: false, cause: "epoch-superseded", detail: `epoch ${input.epoch} is not current` };
  }
  const op = await loadOperation(ctx.tx, input.operationId);
  const [ob] = (await obligationsOf(ctx.tx, [op.id])).filter((o) => o.hook === input.hook);
  if (!ob) return { ok: false, cause: "not-owed", detail: `no post hook ${input.hook} is owed` };
  if (ob.state !== "owed") {
    return { ok: false, cause: "not-owed", detail: `post hook ${input.hook} is ${ob.state}` };
  }
  if (!isTerminal(op.state as OperationState)) {
    return {
      ok: false,
      cause: "scope-held",
      detail: `operation ${op.id} is ${op.state}: nothing more is sent for it until it is settled`,
    };
  }
  // The machine's own gate (comparison 6, as an attempt sees it): a frozen machine, or a recovery
  // scope not released in this epoch (a restored journal may show as owed a hook already sent).
  const gate = await checkGate(ctx.tx, op.machine, ctx.inst);
  if (gate) {
    return {
      ok: false,
      cause: gate.cause === "gate-frozen" ? "machine-frozen" : "gate-recovery",
      detail: gate.detail,
    };
  }
  // A freeze closes every gate, this send's too: it waits for the unfreeze like a commitment.
  const freeze = await readClusterFreeze(ctx.tx, op.cluster);
  if (freeze?.frozen) {
    return {
      ok: false,
      cause: "cluster-frozen",
      detail: `cluster ${op.cluster} is frozen: ${freeze.reason}`,
    };
  }
  const claimId = ctx.ids.newId("hkc");
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "hook-claimed",
    operationId: op.id,
    actor: input.claimant,
    body: { hook: input.hook, claim: claimId },
    nowMs: input.nowMs,
  });
  return {
    ok: true,
    claimId,
    namespace: ob.namespace,
    job: ob.job,
    timeoutSeconds: ob.timeoutSeconds,
  };
}

/** Records how a claimed post hook went (its create's response and the Job's observed outcome). */
export async function hookDischargeTx(ctx: Ctx, input: HookDischargeInput): Promise<void> {
  assertCurrentEpoch(ctx, input.epoch);
  const op = await loadOperation(ctx.tx, input.operationId);
  const rows = await eventsOf(ctx.tx, [op.id]);
  // The claim must be this hook's own: another hook's claim never sent this one.
  const claimed = rows.some((e) =>
    e.kind === "hook-claimed" && parse(e)["claim"] === input.claimId &&
    parse(e)["hook"] === input.hook
  );
  if (!claimed) {
    fail(
      "OperationNotFound",
      `no claim ${input.claimId} of post hook ${input.hook} on operation ${op.id}`,
    );
  }
  // One claimed send has one outcome: a second discharge never joins or rewrites the first.
  if (rows.some((e) => e.kind === "hook-discharged" && parse(e)["claim"] === input.claimId)) {
    fail(
      "TransitionIllegal",
      `claim ${input.claimId} of post hook ${input.hook} is already discharged`,
    );
  }
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "hook-discharged",
    operationId: op.id,
    actor: input.claimant,
    body: {
      hook: input.hook,
      claim: input.claimId,
      responseClass: input.responseClass,
      outcome: input.outcome,
      job: input.jobRef,
      detail: input.detail,
    },
    nowMs: input.nowMs,
  });
}

/**
 * The post hooks still owed on a machine (they refuse its next commitment). Only operations with a
 * pre hook attempt can owe one: found through the operations and attempts tables (small, indexed
 * by operation), so a commitment on a plan without hooks reads no event at all.
 */
export async function owedOnMachine(tx: Tx, machine: string): Promise<HookObligationEntry[]> {
  const rows = await tx.selectFrom("attempts")
    .innerJoin("operations", "operations.id", "attempts.operation_id")
    .select("attempts.operation_id as id")
    .where("operations.machine", "=", machine)
    .where("attempts.phase", "=", "pre-hook")
    .execute();
  const ids = [...new Set(rows.map((r) => r.id))];
  if (ids.length === 0) return [];
  return (await obligationsOf(tx, ids)).filter((o) => o.state === "owed");
}

/** Every obligation of these operations with its derived state. */
export async function obligationsOf(
  tx: Tx,
  operationIds: readonly string[],
): Promise<HookObligationEntry[]> {
  if (operationIds.length === 0) return [];
  // Nothing is owed without a pre hook attempt: the attempts (indexed by operation) answer that
  // before any event is read, so reports of plans without hooks pay nothing here.
  const attempts = await tx.selectFrom("attempts")
    .select(["operation_id", "request_digest", "phase"])
    .where("operation_id", "in", [...operationIds]).execute();
  if (!attempts.some((a) => a.phase === "pre-hook")) return [];
  const events = await eventsOf(tx, operationIds);
  if (!events.some((e) => e.kind === "hook-owed")) return [];
  const ops = await tx.selectFrom("operations").select(["id", "state", "machine"])
    .where("id", "in", [...operationIds]).execute();
  const out: HookObligationEntry[] = [];
  for (const e of events) {
    if (e.kind !== "hook-owed") continue;
    const b = parse(e);
    const op = ops.find((o) => o.id === e.operation_id);
    if (!op) continue;
    const hook = String(b["hook"]);
    const digests = new Set(
      attempts.filter((a) => a.operation_id === op.id).map((a) => a.request_digest),
    );
    const later = events.filter((x) =>
      x.operation_id === op.id && x.seq > e.seq && parse(x)["hook"] === hook
    );
    const claim = later.find((x) => x.kind === "hook-claimed");
    const discharge = later.find((x) => x.kind === "hook-discharged");
    const db = discharge ? parse(discharge) : {};
    // No pre hook attempt: nothing to undo (yet, or ever once the operation has ended).
    if (!digests.has(String(b["preRequestDigest"]))) continue;
    const state: HookObligationEntry["state"] = digests.has(String(b["postRequestDigest"]))
      ? "sent-in-step"
      : discharge
      ? "discharged"
      : claim
      ? "claimed"
      : "owed";
    out.push({
      operationId: op.id,
      node: op.machine,
      hook,
      state,
      owedAtMs: e.at_ms,
      namespace: String(b["namespace"] ?? ""),
      job: (b["job"] ?? {}) as Record<string, unknown>,
      timeoutSeconds: Number(b["timeoutSeconds"] ?? 0),
      ...(claim ? { claimedAtMs: claim.at_ms, claimedBy: claim.actor } : {}),
      ...(discharge
        ? {
          dischargedAtMs: discharge.at_ms,
          outcome: String(db["outcome"] ?? ""),
          detail: String(db["detail"] ?? ""),
          jobRef: String(db["job"] ?? ""),
        }
        : {}),
    });
  }
  return out;
}

async function eventsOf(tx: Tx, operationIds: readonly string[]): Promise<EventTable[]> {
  return await tx.selectFrom("events").selectAll().where("kind", "in", KINDS)
    .where("operation_id", "in", [...operationIds]).orderBy("seq").execute();
}

function parse(e: EventTable): Record<string, unknown> {
  try {
    const v = JSON.parse(e.body);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
