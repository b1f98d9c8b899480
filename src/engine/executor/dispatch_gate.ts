/**
 * The executor's side of the dispatch check: once before a rollout starts (which also yields the
 * bound health policy, read and digest-verified now, as the policy that gates) and again right
 * before each node's commitment, so a trust-root edit, a changed bound file, an expiry or another
 * cluster between two nodes stops the rollout before anything is sent to the next one. Every
 * result, pass or not, is recorded on the journal's hash-chained timeline.
 */
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Journal } from "../../ports/journal.ts";
import {
  checkAtDispatch,
  type DispatchCheckResult,
  type DispatchPorts,
  type DispatchSubject,
} from "../authorize/dispatch_check.ts";
import { dispatchJournalDetail } from "../authorize/journal_entry.ts";
import { controllerActor } from "./observe.ts";

/** The plan as approved and the ports its authority is re-checked through. */
export interface DispatchAuthority {
  readonly subject: DispatchSubject;
  readonly ports: DispatchPorts;
}

/** Why a check did not pass, as one node outcome's reason and detail. */
export interface DispatchStop {
  readonly reason: Reason;
  readonly detail: string;
  /** `refused`: contrary evidence; `held`: evidence could not be read. */
  readonly verdict: "refused" | "held";
}

/** Runs the check and records it; `node` null for the plan-level check before a rollout. */
export async function checkAndRecord(
  /** The controller's journal in its epoch (`journalInEpoch`): a fenced one records no check. */
  journal: Journal,
  owner: string,
  digest: string,
  authority: DispatchAuthority,
  node: { readonly name: string; readonly perNode: boolean },
): Promise<DispatchCheckResult> {
  const r = await checkAtDispatch(authority.subject, authority.ports, node.name);
  await journal.recordDispatchCheck({
    planDigest: digest,
    node: node.perNode ? node.name : null,
    verdict: r.verdict,
    detail: dispatchJournalDetail(r),
    actor: controllerActor(owner),
    nowMs: authority.ports.clock.now(),
  });
  return r;
}

/** The stop a non-passing result means; undefined when it passed. */
export function dispatchStop(r: DispatchCheckResult): DispatchStop | undefined {
  if (r.verdict === "pass") return undefined;
  const first = r.refusals[0]!;
  const more = r.refusals.length > 1
    ? `; also ${r.refusals.slice(1).map((x) => x.reason).join(", ")}`
    : "";
  return { reason: first.reason, detail: `${first.message}${more}`, verdict: r.verdict };
}

/** The plan-level check: the verified bound policy, or why the rollout may not start. */
export async function authorizeRollout(
  journal: Journal,
  owner: string,
  digest: string,
  authority: DispatchAuthority,
): Promise<{ ok: true; policy: HealthPolicy } | { ok: false; stop: DispatchStop }> {
  const first = authority.subject.plan.kind === "ComponentUpgrade"
    ? ""
    : authority.subject.plan.spec.nodes[0]!.name;
  const r = await checkAndRecord(journal, owner, digest, authority, {
    name: first,
    perNode: false,
  });
  const stop = dispatchStop(r);
  if (stop) return { ok: false, stop };
  return { ok: true, policy: r.policy! };
}
