/**
 * Owed post hooks (docs/operating.md#node-hooks): "a post hook always runs when its pre hook was
 * attempted". When a step's own post hook could not go out (a lost response left an attempt
 * unaccounted, so the journal admitted nothing more; or the controller died mid-step), the
 * journal still holds the obligation, recorded before the pre hook's attempt, with the Job to
 * create. Once the operation is settled (classified by the recovery rules or resolved by a
 * person), the rollout sends it before anything else happens on that node: the journal refuses
 * the node's next commitment until it has gone (comparison 4, `hook-owed`), and admits exactly
 * one controller to send it (`claimOwedHook`). A claimed post hook is never sent again, whatever
 * became of it; its outcome is observed like the step's own and anything but `succeeded` holds
 * the rollout.
 */
import type { Reason } from "../../domain/reasons.ts";
import type { OperationRecord } from "../../ports/journal.ts";
import { isTerminal } from "../../domain/operation.ts";
import type { PhaseDeps } from "../executor/deps.ts";
import { errorText } from "../executor/mutation.ts";
import { JOBS, watchJob } from "./hooks.ts";

/** One create's transport bound (as the step's own hook create). */
const CREATE_TRANSPORT_MS = 30_000;

/** What sending them needs: the rollout's deps, or `cairn recover`'s after a classification. */
export type OwedHookDeps = Pick<
  PhaseDeps,
  | "journal"
  | "clock"
  | "kube"
  | "owner"
  | "epoch"
  | "callTimeoutMs"
  | "pollIntervalMs"
  | "signal"
  | "log"
>;

/** What settling a settled operation's owed post hooks came to. */
export type OwedHooksResult =
  | { readonly ok: true; readonly sent: number }
  | { readonly ok: false; readonly reason: Reason; readonly detail: string };

/**
 * Sends every post hook the operation still owes, latest pre hook first (undo in the opposite
 * order of do). Nothing is sent for an operation that is not terminal: its scope is still held.
 */
export async function sendOwedHooks(
  deps: OwedHookDeps,
  op: Pick<OperationRecord, "id" | "machine" | "state">,
): Promise<OwedHooksResult> {
  if (!isTerminal(op.state)) return { ok: true, sent: 0 };
  const owed = (await deps.journal.hookObligations([op.id]))
    .filter((o) => o.state === "owed")
    .sort((a, b) => b.owedAtMs - a.owedAtMs);
  // A controller claims in the epoch it started in (a superseded one is refused); `cairn recover`
  // carries none and its admin acts in the current epoch.
  const epoch = deps.epoch ?? (await deps.journal.installation()).epoch;
  const claimant = `${deps.owner} (controller)`;
  let sent = 0;
  for (const o of owed) {
    const claim = await deps.journal.claimOwedHook({
      operationId: op.id,
      hook: o.hook,
      claimant,
      epoch,
      nowMs: deps.clock.now(),
    });
    if (!claim.ok) {
      // Another controller claimed it between the read and the claim: it is theirs to send.
      if (claim.cause === "not-owed") continue;
      return {
        ok: false,
        // A frozen machine is not a frozen cluster: each freeze is reported as itself, the
        // machine's naming the machine (the journal's detail does).
        reason: claim.cause === "machine-frozen"
          ? "MachineFrozen"
          : claim.cause === "cluster-frozen"
          ? "ClusterFrozen"
          : claim.cause === "epoch-superseded"
          ? "EpochSuperseded"
          : "HookUnresolved",
        detail: `owed post hook ${o.hook} not sent: ${claim.detail}`,
      };
    }
    const meta = (claim.job["metadata"] ?? {}) as Record<string, unknown>;
    const name = String(meta["name"] ?? "");
    const jobRef = `${claim.namespace}/${name}`;
    let responseClass: "accepted" | "target-error" | "transport-failure";
    let outcome: "succeeded" | "failed" | "unresolved";
    let detail: string;
    try {
      const r = await deps.kube.createObject(JOBS, claim.namespace, claim.job, {
        timeoutMs: deps.callTimeoutMs(CREATE_TRANSPORT_MS),
      });
      if (r.kind === "created") {
        responseClass = "accepted";
        const ended = await watchJob(deps, {
          namespace: claim.namespace,
          name,
          timeoutSeconds: claim.timeoutSeconds,
        });
        outcome = ended.outcome;
        detail = ended.detail;
      } else {
        responseClass = "target-error";
        outcome = "unresolved";
        detail = `create not accepted: ${r.kind}${"code" in r ? ` ${r.code}` : ""}: ${r.message}`;
      }
    } catch (e) {
      // The create may have gone out: nothing proves the Job ran, and it is never sent again.
      responseClass = "transport-failure";
      outcome = "unresolved";
      detail = `create's response lost: ${errorText(e)}`;
    }
    await deps.journal.recordHookDischarge({
      operationId: op.id,
      hook: o.hook,
      claimId: claim.claimId,
      claimant,
      responseClass,
      outcome,
      jobRef,
      detail,
      nowMs: deps.clock.now(),
      // In the claim's epoch: a controller that outlived a restore records no discharge after it.
      epoch,
    });
    sent++;
    deps.log.info("owed post hook sent", {
      operationId: op.id,
      node: op.machine,
      verdict: outcome,
      path: jobRef,
    });
    if (outcome !== "succeeded") {
      return {
        ok: false,
        reason: outcome === "failed" ? "HookFailed" : "HookUnresolved",
        detail: `owed post hook ${o.hook} (Job ${jobRef}): ${detail}`,
      };
    }
  }
  return { ok: true, sent };
}
