/**
 * Plan breakpoints (docs/operating.md#breakpoints): the rollout holds before the node after a
 * breakpoint until a continuation for this plan digest and breakpoint, signed by a principal of the
 * trust root, arrives through git. The continuation is read through the same `BoundFileSource` the
 * dispatch check reads bound files through (the watched branch's current tip under the reconciler),
 * and verified with the plan signatures' own SSHSIG code under the trust root as it is now.
 */
import {
  CONTINUATION_NAMESPACE,
  continuationPath,
  continuationText,
} from "../../domain/ops/continuation.ts";
import type { OperatedPlan, Plan } from "../../domain/plan/schema.ts";
import { evaluatePolicy } from "../../domain/trust/policy.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { Clock } from "../../ports/clock.ts";
import type { TrustRoot } from "../../ports/reconcile.ts";
import type { BoundPlan } from "../executor/deps.ts";

/** A breakpoint as the plan declares it. */
export interface Breakpoint {
  readonly name: string;
  /** The node after whose step the rollout holds. */
  readonly after: string;
}

/** Whether the breakpoint's continuation is in and verifies. */
export type ContinuationCheck =
  | { readonly ok: true; readonly signer: string }
  | {
    readonly ok: false;
    readonly reason: "BreakpointHeld" | "ContinuationInvalid";
    readonly detail: string;
  };

/** Checks one breakpoint's continuation. */
export interface BreakpointGate {
  check(bound: BoundPlan<Plan>, breakpoint: string): Promise<ContinuationCheck>;
}

/**
 * The breakpoint between the step before (on node `previous`) and the next one (on `node`), if
 * any: a breakpoint after a node stands before every step on another node that follows a step on
 * it. A TalosUpgrade or ConfigApply has one step per node, so that is the next node; a
 * KubernetesUpgrade, several steps per control plane, holds the first time the rollout leaves the
 * node (after its kube-apiserver), and its signed continuation, once there, lets every later
 * crossing pass.
 */
export function breakpointBefore(
  plan: OperatedPlan,
  previous: string | undefined,
  node: string,
): Breakpoint | undefined {
  if (previous === undefined || previous === node) return undefined;
  return (plan.spec.breakpoints ?? []).find((b) => b.after === previous);
}

/** Continuations read from the repository and verified under the trust root, at each check. */
export function signedContinuations(
  ports: { readonly files: BoundFileSource; readonly trust?: TrustRoot; readonly clock: Clock },
): BreakpointGate {
  return {
    async check(bound, breakpoint) {
      const path = continuationPath(bound.plan.metadata.name, breakpoint);
      const text = await ports.files.read(path);
      if (text.status !== "read") {
        return {
          ok: false,
          reason: "BreakpointHeld",
          detail: `no continuation at ${path} in ${ports.files.describe()}`,
        };
      }
      const expected = continuationText(bound.digest, breakpoint);
      if (new TextDecoder().decode(text.bytes) !== expected) {
        return {
          ok: false,
          reason: "ContinuationInvalid",
          detail: `${path} does not continue plan ${bound.digest.slice(0, 12)} at ${breakpoint}`,
        };
      }
      if (!ports.trust) {
        return { ok: false, reason: "ContinuationInvalid", detail: "no trust root to verify it" };
      }
      const sig = await ports.files.read(`${path}.sig`);
      const verdict = await evaluatePolicy({
        plan: text.bytes,
        signatures: sig.status === "read" ? new TextDecoder().decode(sig.bytes) : undefined,
        signers: await ports.trust.load(),
        author: bound.plan.metadata.author,
        requiredApprovals: 0,
        atMs: ports.clock.now(),
        namespace: CONTINUATION_NAMESPACE,
      });
      // Any principal of the trust root may continue; a signature that does not verify is none.
      const good = verdict.signatures.find((s) => s.ok && s.principals.length > 0);
      return good ? { ok: true, signer: good.principals.join(",") } : {
        ok: false,
        reason: "ContinuationInvalid",
        detail: `${path}: no signature verifies under the trust root (${
          verdict.signatures.map((v) => v.message).join("; ") || "no signature"
        })`,
      };
    },
  };
}
