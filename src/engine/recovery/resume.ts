/**
 * Resume after a takeover (docs/recovery.md#resume-after-a-takeover): the new owner of an operation
 * taken over in flight reads, fresh, the effect of every earlier request the journal has no
 * answer for, classifies it by the rules of `resume_rules.ts`, and has the journal record the
 * classification (`resumeAfterTakeover`). Only then does the executor continue the step from where
 * the journal says it stood. Anything a reading cannot decide — a Talos call, a cordon whose
 * precondition still holds, an unreadable node — leaves the operation `unresolved`, and nothing is
 * sent.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { AttemptReading, AttemptRecord, OperationDetail } from "../../ports/journal.ts";
import type { StepState } from "../executor/deps.ts";
import { kubeReadOptions, NODES } from "../executor/kube_phases.ts";
import { errorText } from "../executor/mutation.ts";
import {
  intentOf,
  readCordon,
  readDrain,
  type ReadingVerdict,
  ResumeCursor,
  unresolvedBy,
} from "./resume_rules.ts";

/** A resumed step's starting point, or why the operation stays `unresolved`. */
export type Resumed =
  | {
    readonly ok: true;
    readonly cursor: ResumeCursor;
    readonly readings: readonly AttemptReading[];
  }
  | { readonly ok: false; readonly reason: Reason; readonly detail: string };

/** Reads and classifies, then records; see the module comment. */
export async function resumeTakenOver(s: StepState): Promise<Resumed> {
  const { journal, clock } = s.deps;
  const detail = await journal.showOperation(s.operationId);
  if (!detail) return { ok: false, reason: "OperationExists", detail: "operation not found" };
  const by = unresolvedBy(detail.events);
  // Taken over in flight, or left in flight by an operator's stop (which classified nothing).
  if (by !== "takeover" && by !== "stopped") {
    // Not resumed: it is recovered, never rerun (the rollout reports it as it always has).
    return {
      ok: false,
      reason: "OperationExists",
      detail: by === "halt"
        ? `operation ${s.operationId} is unresolved by its executor's own classification`
        : by === "human"
        ? `operation ${s.operationId} was taken over by a recovery-admin`
        : `operation ${s.operationId} is unresolved but was not taken over in flight`,
    };
  }
  if ((s.bound.plan.spec.hooks ?? []).length > 0) {
    // A hook's Job and its completion are not read back here; a person decides.
    return {
      ok: false,
      reason: "ResumeUndecided",
      detail: "the plan binds node hooks, whose Jobs a resume does not read back",
    };
  }
  const readings: AttemptReading[] = [];
  for (const a of detail.attempts.filter((x) => x.accountedBy === null)) {
    const v = await readAttempt(s, detail, a);
    if (v.kind === "undecided") {
      return {
        ok: false,
        reason: "ResumeUndecided",
        detail: `attempt ${a.number} (${a.phase}) of an earlier owner: ${v.why}`,
      };
    }
    readings.push(v.reading);
  }
  try {
    await journal.resumeAfterTakeover({
      operationId: s.operationId,
      token: s.token,
      readings,
      nowMs: clock.now(),
    });
  } catch (e) {
    if (e instanceof CairnError && e.reason === "ResumeRefused") {
      return { ok: false, reason: "ResumeRefused", detail: e.message };
    }
    throw e;
  }
  const after = await journal.showOperation(s.operationId);
  return { ok: true, cursor: new ResumeCursor(after ?? detail), readings };
}

/** Reads one earlier request's effect now; only the phases the API server decides are read. */
async function readAttempt(
  s: StepState,
  detail: OperationDetail,
  a: AttemptRecord,
): Promise<ReadingVerdict> {
  const intent = intentOf(detail, a);
  switch (a.phase) {
    case "cordon": {
      const rv = intent?.["resourceVersion"];
      try {
        const node = await s.deps.kube.getObject(
          NODES,
          s.node,
          undefined,
          kubeReadOptions(s, "cordon"),
        );
        return readCordon(a.id, typeof rv === "string" ? rv : undefined, node);
      } catch (e) {
        return { kind: "undecided", why: `the node could not be read: ${errorText(e)}` };
      }
    }
    case "drain": {
      const pods = intent?.["pods"];
      try {
        const list = await s.deps.kube.listPods(s.node, kubeReadOptions(s, "drain"));
        return readDrain(a.id, Array.isArray(pods) ? pods.map(String) : undefined, list.items);
      } catch (e) {
        return { kind: "undecided", why: `the node's pods could not be read: ${errorText(e)}` };
      }
    }
    default:
      // A Talos call's late landing cannot be read back, and an install is never sent twice.
      return {
        kind: "undecided",
        why: `a ${a.phase} request's outcome cannot be read back; it is never sent again`,
      };
  }
}
