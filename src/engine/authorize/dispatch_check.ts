/**
 * The dispatch check (docs/safeguards.md#dispatch-re-check: a plan-time check is not a dispatch
 * authorisation): every check that authorised a plan runs again at the moment a mutation is
 * about to be dispatched, on evidence read now — the plan checks of `cairn plan check` (same
 * functions: versions, catalogue digest and freshness, expiry, bound-file digests), the
 * signatures and approvals under the trust root as it is now, the identity of the cluster as the
 * cluster reports it, and each hop's installer as the registry resolves it. `cairn apply`,
 * `cairn rehearse` and the executor (before each node's commitment) call it; a refusal sends
 * nothing.
 */
import { type Catalogue, parseCatalogue } from "../../domain/catalogue.ts";
import { ContentMemo } from "../../domain/content_memo.ts";
import { sha256HexSync } from "../../domain/plan/digest_sync.ts";
import { CairnError } from "../../domain/errors.ts";
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import { parseHealthPolicy } from "../../domain/health/policy_parse.ts";
import { type BoundFileLoad, boundFiles, checkBoundFiles } from "../../domain/plan/bound_files.ts";
import { checkPlan } from "../../domain/plan/checks.ts";
import type { PlanIssue } from "../../domain/plan/parse.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import { isReason, type Reason, reasonInfo } from "../../domain/reasons.ts";
import { evaluatePolicy } from "../../domain/trust/policy.ts";
import type { Clock } from "../../ports/clock.ts";
import type {
  BoundFileSource,
  ClusterIdentitySource,
  InstallerResolver,
} from "../../ports/dispatch.ts";
import type { TrustRoot } from "../../ports/reconcile.ts";
import type { ReasonNote } from "../../domain/reasons.ts";
import { loadBoundFile } from "./bound_policy.ts";
import { type InstallerCheck, resolveInstallers } from "./installer_check.ts";
import type { Verdict } from "../../domain/verdict.ts";

/** The plan as it was bound: exact bytes, signatures and the approval policy it was held to. */
export interface DispatchSubject {
  readonly plan: Plan;
  readonly bytes: Uint8Array;
  /** The `.sig` text recorded with the plan. */
  readonly signatures: string;
  readonly requiredApprovals: number;
}

/** Where current evidence comes from. */
export interface DispatchPorts {
  readonly files: BoundFileSource;
  /** Absent only for a rehearsal without a trust root: the check is then "not evaluated". */
  readonly trust?: TrustRoot;
  readonly clock: Clock;
  readonly cluster: ClusterIdentitySource;
  /** Absent: each hop's installer is recorded as not resolved (never as a pass). */
  readonly installers?: InstallerResolver;
}

/** One check as the journal records it. */
export interface DispatchCheckItem {
  readonly check: "plan" | "trust-root" | "cluster-identity" | "installer";
  readonly verdict: Verdict | "not-evaluated";
  readonly detail: string;
  readonly reason?: Reason;
}

/** What the check established. `held` when something could not be read, never a pass. */
export interface DispatchCheckResult {
  readonly verdict: "pass" | "refused" | "held";
  /** The node whose commitment it authorises, when per node. */
  readonly node?: string;
  readonly atMs: number;
  readonly files: string;
  readonly items: readonly DispatchCheckItem[];
  /** Why it did not pass, in order found. */
  readonly refusals: readonly ReasonNote[];
  readonly installers: readonly InstallerCheck[];
  /** The bound health policy, read and digest-verified now: the policy that gates. */
  readonly policy?: HealthPolicy;
}

/**
 * Runs every authorising check on current evidence. `node` is the node about to be committed
 * (cluster identity is read from it); for a plan-level check, the plan's first node.
 */
export async function checkAtDispatch(
  subject: DispatchSubject,
  ports: DispatchPorts,
  node: string,
): Promise<DispatchCheckResult> {
  const atMs = ports.clock.now();
  const items: DispatchCheckItem[] = [];
  const refusals: ReasonNote[] = [];
  const note = (item: DispatchCheckItem, where: string) => {
    items.push(item);
    if ((item.verdict === "fail" || item.verdict === "unreadable") && item.reason) {
      refusals.push({ reason: item.reason, message: item.detail, where });
    }
  };
  // Every check runs whatever the others find (none short-circuits), so they read their
  // evidence side by side; their items are noted in the same order as ever.
  const [plan, trust, clusterItem, installers] = await Promise.all([
    planChecks(subject.plan, ports.files, atMs),
    trustCheck(subject, ports.trust, atMs),
    clusterCheck(subject.plan, ports.cluster, node),
    subject.plan.kind === "TalosUpgrade"
      ? resolveInstallers(subject.plan, ports.installers)
      : Promise.resolve([]),
  ]);
  for (const issue of plan.issues) {
    note({
      check: "plan",
      verdict: holds(issue.reason) ? "unreadable" : "fail",
      reason: issue.reason,
      detail: issue.message,
    }, issue.path.join("."));
  }
  if (plan.issues.length === 0) {
    note({ check: "plan", verdict: "pass", detail: `plan checks pass as of ${iso(atMs)}` }, "");
  }
  note(trust, "trust root");
  note(clusterItem, node);
  for (const i of installers) note(i.item, `spec.hops.${i.hop}.installer.image`);
  const held = refusals.length > 0 && refusals.every((r) => holds(r.reason));
  return {
    verdict: refusals.length === 0 ? "pass" : held ? "held" : "refused",
    node,
    atMs,
    files: ports.files.describe(),
    items,
    refusals,
    installers,
    ...(plan.policy && refusals.length === 0 ? { policy: plan.policy } : {}),
  };
}

/** A reason whose retry class says "wait/backoff": the evidence was not there, not contrary. */
function holds(reason: string): boolean {
  return isReason(reason) && reasonInfo(reason).retry !== "never";
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The bound catalogue and policy, parsed once per path and content (read again at every check). */
const parsedCatalogues = new ContentMemo<Promise<Catalogue>>();
const parsedPolicies = new ContentMemo<ReturnType<typeof parseHealthPolicy>>();

/** `cairn plan check`'s checks (the same functions) over the bound files as they are now. */
async function planChecks(
  plan: Plan,
  files: BoundFileSource,
  nowMs: number,
): Promise<{ issues: PlanIssue[]; policy?: HealthPolicy }> {
  const issues: PlanIssue[] = [];
  let catalogue: Catalogue | undefined;
  const bound = plan.spec.catalogue;
  let catalogueRefused: { reason: Reason; detail: string } | undefined;
  if (bound) {
    const read = await files.read(bound.path);
    if (read.status === "refused") catalogueRefused = read;
    if (read.status === "read") {
      try {
        const bytes = read.bytes;
        catalogue = await parsedCatalogues.get(
          `${bound.path}\0${sha256HexSync(bytes)}`,
          () => parseCatalogue(bytes, bound.path),
        );
      } catch (e) {
        if (!(e instanceof CairnError)) throw e;
        issues.push({ reason: e.reason, message: e.message, path: ["spec", "catalogue", "path"] });
      }
    }
  }
  // A catalogue that did not parse is reported once, not again as "missing".
  if (issues.length === 0) {
    issues.push(
      ...checkPlan(plan, { nowMs, catalogue, ...(catalogueRefused ? { catalogueRefused } : {}) }),
    );
  }
  const roles = Object.entries(boundFiles(plan));
  const read = await Promise.all(roles.map(([, file]) => loadBoundFile(files, file.path)));
  const loads: Record<string, BoundFileLoad> = Object.fromEntries(
    roles.map(([role], k) => [role, read[k]!]),
  );
  issues.push(...checkBoundFiles(plan, loads));
  const policyLoad = loads["healthPolicy"];
  if (policyLoad?.status !== "read" || issues.some((i) => i.path[1] === "healthPolicy")) {
    return { issues };
  }
  const parsed = parsedPolicies.get(
    `${plan.spec.healthPolicy.path}\0${policyLoad.sha256}`,
    () => parseHealthPolicy(policyLoad.text, plan.spec.healthPolicy.path),
  );
  if (!parsed.ok) {
    const p = parsed.problems[0]!;
    issues.push({
      reason: "HealthPolicyInvalid",
      message: `Health policy "${plan.spec.healthPolicy.path}": ${p.message}`,
      path: ["spec", "healthPolicy", "path"],
    });
    return { issues };
  }
  return { issues, policy: parsed.policy };
}

/** Signatures and approvals under the trust root read now (a removed signer stops the plan). */
async function trustCheck(
  subject: DispatchSubject,
  trust: TrustRoot | undefined,
  atMs: number,
): Promise<DispatchCheckItem> {
  if (!trust) {
    return {
      check: "trust-root",
      verdict: "not-evaluated",
      detail: "no trust root was given (a rehearsal); signatures were not verified",
    };
  }
  let signers;
  try {
    signers = await trust.load();
  } catch (e) {
    return {
      check: "trust-root",
      verdict: "unreadable",
      reason: "TrustRootUnreadable",
      detail: `the trust root could not be read now: ${e instanceof Error ? e.message : e}`,
    };
  }
  const verdict = await evaluatePolicy({
    plan: subject.bytes,
    signatures: subject.signatures === "" ? undefined : subject.signatures,
    signers,
    author: subject.plan.metadata.author,
    requiredApprovals: subject.requiredApprovals,
    atMs,
  });
  if (verdict.ok) {
    return {
      check: "trust-root",
      verdict: "pass",
      detail: `signed by ${subject.plan.metadata.author}, approved by ` +
        `${verdict.approvers.join(", ")} under the trust root as read now`,
    };
  }
  return {
    check: "trust-root",
    verdict: "fail",
    reason: verdict.reasons[0] ?? "PlanNotApproved",
    detail: `under the trust root as read now: ${verdict.summary}`,
  };
}

/** The plan's cluster against the name the cluster itself reports. */
async function clusterCheck(
  plan: Plan,
  cluster: ClusterIdentitySource,
  node: string,
): Promise<DispatchCheckItem> {
  const want = plan.metadata.cluster;
  let seen;
  try {
    seen = await cluster.read(node);
  } catch (e) {
    return {
      check: "cluster-identity",
      verdict: "unreadable",
      reason: "ClusterIdentityUnreadable",
      detail: `the identity of the cluster could not be read from ${node}: ` +
        `${e instanceof Error ? e.message : e}`,
    };
  }
  const id = seen.id ? ` (id ${seen.id})` : "";
  if (seen.name !== want) {
    return {
      check: "cluster-identity",
      verdict: "fail",
      reason: "ClusterIdentityMismatch",
      detail: `the plan is for cluster ${want}; the cluster connected to is ${seen.name}${id} ` +
        `(${seen.source})`,
    };
  }
  return {
    check: "cluster-identity",
    verdict: "pass",
    detail: `cluster ${seen.name}${id} (${seen.source})`,
  };
}
