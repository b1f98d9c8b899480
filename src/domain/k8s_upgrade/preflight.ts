/**
 * The KubernetesUpgrade preflight (docs/safeguards.md#the-table, rows 23–25): judged on evidence read now, before
 * the run and again before each commitment. Contrary evidence refuses, evidence that could not be
 * read holds, nothing unread passes. Pure: the engine reads (engine/k8s_upgrade/read_evidence.ts)
 * and records, this module decides.
 *
 * - Row 23: no OS rollout partial in the journal, every node on one Talos version, the plan's.
 * - Row 24: the target inside the running Talos minor's support window (support_matrix.ts), a
 *   patch or one-minor step up from what every component runs, the version skew policy kept by
 *   the current versions (skew.ts), and no API removed by the target still requested.
 * - Row 25: the bootstrap manifest inventory present (read, never created), every bootstrap
 *   object's ownership known and no field shared with another manager (ownership.ts).
 */
import type { Reason } from "../reasons.ts";
import { compareVersions, parseVersion, tryParseVersion } from "../version.ts";
import { inSupportWindow, supportWindow } from "./support_matrix.ts";
import { type ComponentVersion, skewViolations } from "./skew.ts";
import { type BootstrapObject, describeOverlap, judgeOwnership } from "./ownership.ts";

/** What one node runs, as read (undefined: could not be read). */
export interface NodeFacts {
  readonly name: string;
  readonly role: "controlplane" | "worker";
  readonly talosVersion: string | undefined;
  readonly kubeletVersion: string | undefined;
}

/** One request count of an API the apiserver reports as deprecated (its removal release). */
export interface DeprecatedApiUse {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** `removed_release` label, `major.minor`; "" when the API has no planned removal. */
  readonly removedRelease: string;
}

/** Whether a read succeeded, and what it saw. */
export type Reading<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: string };

/** The bootstrap manifest inventory ConfigMap, as read (a 404 is `present: false`). */
export interface InventoryFacts {
  readonly present: boolean;
  readonly namespacePresent: boolean;
  readonly uid?: string;
  readonly resourceVersion?: string;
  /** The object ids it lists (`<namespace>_<name>_<group>_<kind>`). */
  readonly entries?: readonly string[];
}

/** Every fact the preflight judges. */
export interface PreflightEvidence {
  readonly nodes: readonly NodeFacts[];
  /** Static pod and kube-proxy versions (kubelets come from `nodes`). */
  readonly components: readonly ComponentVersion[];
  /** Holding operations of other plans and partial OS rollouts, from the journal. */
  readonly osRollout: {
    readonly partial: boolean;
    readonly detail: string;
    /** The journal could not be read (a preview without one): holds, never passes. */
    readonly unread?: boolean;
  };
  readonly deprecatedApis: Reading<readonly DeprecatedApiUse[]>;
  readonly inventory: Reading<InventoryFacts>;
  readonly bootstrap: Reading<readonly BootstrapObject[]>;
}

/** The plan's side. */
export interface PreflightPlan {
  readonly talosVersion: string;
  readonly from: string;
  readonly to: string;
  readonly nodes: readonly { readonly name: string; readonly role: string }[];
}

/** One row's finding, with the reasons found (empty: it passed). */
export interface RowFinding {
  readonly verdict: "pass" | "refused" | "held";
  readonly evidence: string;
  readonly problems: readonly { readonly reason: Reason; readonly message: string }[];
}

/** The preflight's judgement: per row, and the first stop. */
export interface PreflightJudgement {
  readonly verdict: "pass" | "refused" | "held";
  readonly uniformOs: RowFinding;
  readonly skew: RowFinding;
  readonly ownership: RowFinding;
}

type Problem = { readonly reason: Reason; readonly message: string; readonly held?: boolean };

function finding(problems: readonly Problem[], passEvidence: string): RowFinding {
  const refused = problems.some((p) => !p.held);
  return {
    verdict: problems.length === 0 ? "pass" : refused ? "refused" : "held",
    evidence: problems.length === 0 ? passEvidence : problems.map((p) => p.message).join("; "),
    problems: problems.map((p) => ({ reason: p.reason, message: p.message })),
  };
}

/** Row 23: the OS rollout finished and every node on the plan's one Talos version. */
export function judgeUniformOs(plan: PreflightPlan, e: PreflightEvidence): RowFinding {
  const problems: Problem[] = [];
  if (e.osRollout.partial) {
    problems.push({ reason: "KubernetesOsRolloutPartial", message: e.osRollout.detail });
  } else if (e.osRollout.unread) {
    problems.push({
      reason: "KubernetesEvidenceUnreadable",
      message: `whether an OS rollout is partial is unknown: ${e.osRollout.detail}`,
      held: true,
    });
  }
  const byNode = new Map(e.nodes.map((n) => [n.name, n]));
  const versions = new Set<string>();
  for (const p of plan.nodes) {
    const n = byNode.get(p.name);
    if (!n || n.talosVersion === undefined) {
      problems.push({
        reason: "KubernetesEvidenceUnreadable",
        message: `the Talos version of ${p.name} could not be read`,
        held: true,
      });
      continue;
    }
    versions.add(n.talosVersion);
  }
  if (versions.size > 1) {
    const list = e.nodes.filter((n) => n.talosVersion !== undefined)
      .map((n) => `${n.name}=${n.talosVersion}`).join(", ");
    problems.push({
      reason: "KubernetesMixedTalosVersions",
      message: `nodes run mixed Talos versions (${list}); finish the OS rollout first`,
    });
  } else if (versions.size === 1 && !versions.has(plan.talosVersion)) {
    problems.push({
      reason: "KubernetesTalosVersionUnexpected",
      message: `every node runs Talos ${[...versions][0]}, the plan expects ${plan.talosVersion}`,
    });
  }
  return finding(
    problems,
    `no OS rollout partial (${e.osRollout.detail}); all ${plan.nodes.length} nodes run Talos ` +
      plan.talosVersion,
  );
}

/** Row 24: support window, step, skew and removed APIs, on every node's actual versions. */
/** How strictly versions are expected (see {@link judgePreflight}). */
export interface PreflightOptions {
  /** Every component must still run the plan's `from`... */
  readonly expectFrom: boolean;
  /**
   * ...except those this plan's own operations already moved (`<component>@<node>`), which may
   * run `from` or `to` (a resumed rollout).
   */
  readonly moved?: ReadonlySet<string>;
}

export function judgeSkew(
  plan: PreflightPlan,
  e: PreflightEvidence,
  o: PreflightOptions,
): RowFinding {
  const problems: Problem[] = [];
  const to = parseVersion(plan.to);
  const from = parseVersion(plan.from);
  const talos = tryParseVersion(plan.talosVersion);
  const window = talos ? supportWindow(talos) : undefined;
  if (!window) {
    problems.push({
      reason: "KubernetesSupportUnknown",
      message: `no Kubernetes support window is known for Talos ${plan.talosVersion}`,
      held: true,
    });
  } else if (!inSupportWindow(window, to)) {
    problems.push({
      reason: "KubernetesUnsupported",
      message: `Kubernetes ${plan.to} is outside Talos ${window.talos}'s supported ` +
        `${window.minKubernetes}–${window.maxKubernetes}`,
    });
  }
  if (compareVersions(to, from) <= 0 || to.major !== from.major || to.minor - from.minor > 1) {
    problems.push({
      reason: "KubernetesStepInvalid",
      message: `${plan.from} → ${plan.to} is not a patch or a one-minor step up`,
    });
  }
  const kubelets: ComponentVersion[] = e.nodes.map((n) => ({
    component: "kubelet",
    node: n.name,
    version: n.kubeletVersion,
  }));
  const all = [...e.components, ...kubelets];
  for (const c of all) {
    if (c.version === undefined) {
      problems.push({
        reason: "KubernetesEvidenceUnreadable",
        message: `${c.component} on ${c.node}: version could not be read`,
        held: true,
      });
    } else if (
      o.expectFrom && c.version !== plan.from &&
      !(c.version === plan.to && o.moved?.has(`${c.component}@${c.node}`))
    ) {
      problems.push({
        reason: "KubernetesVersionUnexpected",
        message: `${c.component} on ${c.node} runs ${c.version}, the plan expects ${plan.from}`,
      });
    }
  }
  for (const cp of plan.nodes.filter((n) => n.role === "controlplane")) {
    for (
      const comp of ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const
    ) {
      if (!e.components.some((c) => c.node === cp.name && c.component === comp)) {
        problems.push({
          reason: "KubernetesEvidenceUnreadable",
          message: `no ${comp} static pod was observed on ${cp.name}`,
          held: true,
        });
      }
    }
  }
  for (const v of skewViolations(all)) {
    problems.push({ reason: "KubernetesSkewViolated", message: v.detail });
  }
  if (!e.deprecatedApis.ok) {
    problems.push({
      reason: "KubernetesEvidenceUnreadable",
      message: `requested deprecated APIs could not be read: ${e.deprecatedApis.error}`,
      held: true,
    });
  } else {
    for (const u of e.deprecatedApis.value) {
      const removed = u.removedRelease ? tryParseVersion(`${u.removedRelease}.0`) : undefined;
      if (removed && compareVersions(removed, { ...to, patch: 0, prerelease: [] }) <= 0) {
        problems.push({
          reason: "KubernetesRemovedApiInUse",
          message: `${u.resource}.${u.version}.${u.group || "core"} is still requested and ` +
            `removed in ${u.removedRelease} (target ${plan.to})`,
        });
      }
    }
  }
  const cp = e.components.filter((c) => c.component === "kube-apiserver").length;
  return finding(
    problems,
    `${plan.from} → ${plan.to} inside Talos ${window?.talos}'s ${window?.minKubernetes}–` +
      `${window?.maxKubernetes}; ${all.length} component versions read (${cp} apiservers, ` +
      `${kubelets.length} kubelets), skew policy kept, no API removed by ${plan.to} requested`,
  );
}

/** Row 25: inventory present, ownership known, no field shared with another manager. */
export function judgeBootstrap(e: PreflightEvidence): RowFinding {
  const problems: Problem[] = [];
  if (!e.inventory.ok) {
    problems.push({
      reason: "KubernetesEvidenceUnreadable",
      message: `the manifest inventory could not be read: ${e.inventory.error}`,
      held: true,
    });
  } else if (!e.inventory.value.present) {
    problems.push({
      reason: "BootstrapInventoryMissing",
      message: `the bootstrap manifest inventory is missing${
        e.inventory.value.namespacePresent ? "" : " (and so is its namespace)"
      }; it was left missing, nothing was created`,
    });
  }
  if (!e.bootstrap.ok) {
    problems.push({
      reason: "KubernetesEvidenceUnreadable",
      message: `bootstrap objects could not be read: ${e.bootstrap.error}`,
      held: true,
    });
    return finding(problems, "");
  }
  const j = judgeOwnership(e.bootstrap.value);
  for (const u of j.unknown) {
    problems.push({
      reason: "BootstrapOwnershipUnknown",
      message: `${u.object}: ownership unknown (${u.why})`,
    });
  }
  for (const o of j.overlaps) {
    problems.push({ reason: "BootstrapOwnershipOverlap", message: describeOverlap(o) });
  }
  const inv = e.inventory.ok ? e.inventory.value : undefined;
  return finding(
    problems,
    `inventory present (uid ${inv?.uid ?? "?"}, rv ${inv?.resourceVersion ?? "?"}); ` +
      `${e.bootstrap.value.length} bootstrap objects, each owned by its manager alone: ` +
      e.bootstrap.value.map((o) => `${o.ref}@${o.resourceVersion}`).join(", "),
  );
}

/** The whole preflight. `expectFrom`: every component must still run the plan's `from`. */
export function judgePreflight(
  plan: PreflightPlan,
  e: PreflightEvidence,
  o: PreflightOptions,
): PreflightJudgement {
  const uniformOs = judgeUniformOs(plan, e);
  const skew = judgeSkew(plan, e, o);
  const ownership = judgeBootstrap(e);
  const rows = [uniformOs, skew, ownership];
  const verdict = rows.some((r) => r.verdict === "refused")
    ? "refused"
    : rows.some((r) => r.verdict === "held")
    ? "held"
    : "pass";
  return { verdict, uniformOs, skew, ownership };
}
