/**
 * Offline semantic checks of a schema-valid plan: pure functions of the plan, the release
 * catalogue snapshot and the current time (passed in). They return issues at field paths;
 * `located()` in parse.ts turns them into file:line:column problems.
 */
import {
  type Catalogue,
  CATALOGUE_MAX_AGE_MS,
  formatWindow,
  hasRelease,
  inWindow,
  isCatalogueStale,
  latestPatch,
  supportRow,
} from "../catalogue.ts";
import {
  compareVersions,
  formatVersion,
  isLifecycleApiVersion,
  parseVersion,
  type Version,
} from "../version.ts";
import type { Reason } from "../reasons.ts";
import { modeFitsClass, modeRejectedByVersion } from "../config_apply/classify.ts";
import type { PlanIssue } from "./parse.ts";
import type {
  ComponentUpgradePlan,
  ConfigApplyPlan,
  KubernetesUpgradePlan,
  OperatedPlan,
  Plan,
  PlanNode,
  RecoveryAction,
  TalosUpgradePlan,
} from "./schema.ts";
import type { FieldPath } from "./yaml_load.ts";

/** What the checks need besides the plan. */
export interface CheckContext {
  /** Current time, epoch milliseconds UTC. */
  readonly nowMs: number;
  /** The catalogue at the plan's bound path, or undefined when it is missing or unreadable. */
  readonly catalogue: Catalogue | undefined;
  /**
   * Why the catalogue's bound path was refused unread (symlink, not a regular file, too large,
   * outside the repository); reported instead of `CatalogueMissing`.
   */
  readonly catalogueRefused?: { readonly reason: Reason; readonly detail: string };
  readonly catalogueMaxAgeMs?: number;
}

type Issues = PlanIssue[];
const SPEC = ["spec"] as const;

function issue(reason: PlanIssue["reason"], message: string, path: FieldPath): PlanIssue {
  return { reason, message, path };
}

/** Every semantic issue of `plan`; empty when the plan may proceed to signatures and preview. */
export function checkPlan(plan: Plan, ctx: CheckContext): PlanIssue[] {
  const out: Issues = [];
  checkExpiry(plan, ctx.nowMs, out);
  switch (plan.kind) {
    case "TalosUpgrade":
      checkTalosUpgrade(plan, ctx, out);
      break;
    case "KubernetesUpgrade":
      checkKubernetesUpgrade(plan, ctx, out);
      break;
    case "ConfigApply":
      checkConfigApply(plan, ctx, out);
      break;
    case "ComponentUpgrade":
      checkComponentUpgrade(plan, ctx, out);
      break;
  }
  return out;
}

function checkExpiry(plan: Plan, nowMs: number, out: Issues): void {
  if (Date.parse(plan.metadata.expires) <= nowMs) {
    out.push(issue("PlanExpired", `Plan expired at ${plan.metadata.expires}`, [
      "metadata",
      "expires",
    ]));
  }
}

/** Catalogue presence, digest and age; returns the catalogue only when it may be used. */
function usableCatalogue(
  bound: { sha256: string; path: string },
  ctx: CheckContext,
  out: Issues,
): Catalogue | undefined {
  const cat = ctx.catalogue;
  if (!cat && ctx.catalogueRefused) {
    const { reason, detail } = ctx.catalogueRefused;
    out.push(issue(reason, `Release catalogue "${bound.path}" is refused unread: ${detail}`, [
      ...SPEC,
      "catalogue",
      "path",
    ]));
    return undefined;
  }
  if (!cat) {
    out.push(issue("CatalogueMissing", `Release catalogue "${bound.path}" is missing`, [
      ...SPEC,
      "catalogue",
      "path",
    ]));
    return undefined;
  }
  if (cat.sha256 !== bound.sha256) {
    out.push(issue(
      "CatalogueDigestMismatch",
      `Release catalogue "${bound.path}" has digest ${cat.sha256}, the plan binds ${bound.sha256}`,
      [...SPEC, "catalogue", "sha256"],
    ));
    return undefined;
  }
  const maxAge = ctx.catalogueMaxAgeMs ?? CATALOGUE_MAX_AGE_MS;
  if (isCatalogueStale(cat, ctx.nowMs, maxAge)) {
    out.push(issue(
      "CatalogueStale",
      `Release catalogue snapshot of ${cat.file.metadata.snapshotAt} is older than ${
        Math.round(maxAge / 86_400_000)
      } days`,
      [...SPEC, "catalogue", "path"],
    ));
    return undefined;
  }
  return cat;
}

/** Downgrade / unchanged / skipped minor between two versions. True when the step is sound. */
function checkStep(from: Version, to: Version, toPath: FieldPath, out: Issues): boolean {
  const c = compareVersions(to, from);
  const names = `${formatVersion(from)} to ${formatVersion(to)}`;
  if (c < 0) out.push(issue("VersionDowngrade", `Cannot go from ${names}: a downgrade`, toPath));
  else if (c === 0) {
    out.push(
      issue("VersionUnchanged", `Source and target are both ${names.split(" to ")[0]}`, toPath),
    );
  } else if (to.major !== from.major || to.minor > from.minor + 1) {
    out.push(
      issue("SkippedMinor", `Cannot go from ${names}: minors must be taken one at a time`, toPath),
    );
  } else return true;
  return false;
}

function checkKnown(cat: Catalogue, v: Version, path: FieldPath, out: Issues): boolean {
  if (hasRelease(cat, v)) return true;
  out.push(
    issue(
      "CatalogueUnknownVersion",
      `Talos ${formatVersion(v)} is not in the release catalogue`,
      path,
    ),
  );
  return false;
}

function checkTalosUpgrade(plan: TalosUpgradePlan, ctx: CheckContext, out: Issues): void {
  const spec = plan.spec;
  const cat = usableCatalogue(spec.catalogue, ctx, out);
  spec.hops.forEach((hop, i) => {
    const at = [...SPEC, "hops", i] as const;
    const from = parseVersion(hop.from), to = parseVersion(hop.to);
    const prev = spec.hops[i - 1];
    if (prev && compareVersions(parseVersion(prev.to), from) !== 0) {
      out.push(
        issue(
          "HopChainBroken",
          `Hop ${i} starts at ${hop.from}, the previous hop ends at ${prev.to}`,
          [...at, "from"],
        ),
      );
    }
    const sound = checkStep(from, to, [...at, "to"], out);
    if (isLifecycleApiVersion(from) !== (hop.rpcPath === "lifecycle")) {
      const want = isLifecycleApiVersion(from) ? "lifecycle" : "legacy";
      out.push(
        issue(
          "RpcPathMismatch",
          `A node running ${hop.from} is upgraded through the ${want} path, not ${hop.rpcPath}`,
          [...at, "rpcPath"],
        ),
      );
    }
    checkInstaller(plan, i, out);
    if (cat && sound) checkHopAgainstCatalogue(plan, i, cat, out);
  });
  checkRebootMode(plan, out);
  checkBreakpoints(plan, out);
  commonRollout(spec, "workersFirst", out);
  checkDrainBound(spec.phases, out);
}

/**
 * A drain sends its evictions under one attempt, and none once that attempt's transport deadline
 * has passed (recovery's settle floor counts from it): a drain bound longer than the drain's
 * transport deadline could never be waited out, so it is refused rather than silently cut short.
 */
function checkDrainBound(
  phases: { drainTimeoutSeconds: number; deadlines: { drain: { transportSeconds: number } } },
  out: Issues,
): void {
  const transport = phases.deadlines.drain.transportSeconds;
  if (phases.drainTimeoutSeconds > transport) {
    out.push(
      issue(
        "DeadlinesInconsistent",
        `drainTimeoutSeconds ${phases.drainTimeoutSeconds}s exceeds the drain's transport deadline ${transport}s; no eviction is sent after that deadline: raise deadlines.drain.transportSeconds to at least ${phases.drainTimeoutSeconds} or lower drainTimeoutSeconds to at most ${transport}`,
        [...SPEC, "phases", "drainTimeoutSeconds"],
      ),
    );
  }
}

/**
 * A breakpoint stops the rollout after a node of the plan and before another one: after a node
 * the plan does not have, or after its last node, it would never hold anything (docs/operating.md).
 * A KubernetesUpgrade's control plane is left again after its own components, before the kubelets,
 * so there the last node is a stop point too when it is a control plane among other nodes.
 */
function checkBreakpoints(plan: OperatedPlan, out: Issues): void {
  const names = plan.spec.nodes.map((n) => n.name);
  const seen = new Set<string>();
  (plan.spec.breakpoints ?? []).forEach((b, i) => {
    const at = [...SPEC, "breakpoints", i] as const;
    const where = names.indexOf(b.after);
    const leftAgain = plan.kind === "KubernetesUpgrade" && names.length > 1 &&
      plan.spec.nodes[where]?.role === "controlplane";
    if (where < 0 || (where === names.length - 1 && !leftAgain)) {
      out.push(issue(
        "BreakpointInvalid",
        where < 0
          ? `Breakpoint ${b.name} follows ${b.after}, which is not a node of this plan`
          : `Breakpoint ${b.name} follows the last node ${b.after}: nothing would wait for it`,
        [...at, "after"],
      ));
    }
    if (seen.has(b.name)) {
      out.push(
        issue("BreakpointInvalid", `Breakpoint ${b.name} is declared twice`, [...at, "name"]),
      );
    }
    seen.add(b.name);
  });
}

/**
 * A powercycle reboot is refused for Secure Boot nodes: on the home-ops Secure Boot fleet
 * (seed 004, tuppr) `rebootMode: powercycle` never fired and left a node drained and cordoned
 * on the old version. The plan shows Secure Boot by its installer (a `-installer-secureboot`
 * image), so the refusal needs no knowledge the plan does not already bind.
 */
function checkRebootMode(plan: TalosUpgradePlan, out: Issues): void {
  if (plan.spec.phases.rebootMode !== "powercycle") return;
  const hop = plan.spec.hops.findIndex((h) => isSecureBootInstaller(h.installer.image));
  if (hop < 0) return;
  out.push(
    issue(
      "PowercycleOnSecureBoot",
      `rebootMode powercycle is refused: hop ${hop} installs a Secure Boot image ` +
        `(${plan.spec.platform}${SECUREBOOT_SUFFIX}), and a powercycle reboot of Secure Boot ` +
        "nodes has left a node drained and cordoned on the old version; use rebootMode default",
      [...SPEC, "phases", "rebootMode"],
    ),
  );
}

/**
 * Image Factory names a Secure Boot installer `<platform>-installer-secureboot/<schematic>`: the
 * plan states that its nodes boot with Secure Boot (signed UKIs) by installing one.
 */
const SECUREBOOT_SUFFIX = "-installer-secureboot";

/** Does the hop install a Secure Boot image (see {@link SECUREBOOT_SUFFIX})? */
export function isSecureBootInstaller(image: string): boolean {
  const name = image.split("@")[0]!.replace(/:[^:/]+$/, "");
  return name.split("/").slice(-2)[0]?.endsWith(SECUREBOOT_SUFFIX) ?? false;
}

function checkInstaller(plan: TalosUpgradePlan, i: number, out: Issues): void {
  const hop = plan.spec.hops[i]!;
  const [name = "", tag = ""] = hop.installer.image.split("@")[0]!.split(/:(?=[^:/]+$)/);
  const segments = name.split("/");
  const flavour = isSecureBootInstaller(hop.installer.image) ? SECUREBOOT_SUFFIX : "-installer";
  const want = `${plan.spec.platform}${flavour}/${hop.installer.schematic}`;
  const problem = tag !== hop.to
    ? `tag ${tag} is not the hop target ${hop.to}`
    : segments.slice(-2).join("/") !== want
    ? `path does not end in ${plan.spec.platform}-installer[-secureboot]/<schematic> with the ` +
      "hop's schematic"
    : undefined;
  if (problem) {
    out.push(
      issue("InstallerImageMismatch", `Installer image ${problem}`, [
        ...SPEC,
        "hops",
        i,
        "installer",
        "image",
      ]),
    );
  }
}

function checkHopAgainstCatalogue(plan: TalosUpgradePlan, i: number, cat: Catalogue, out: Issues) {
  const hop = plan.spec.hops[i]!;
  const at = [...SPEC, "hops", i] as const;
  const from = parseVersion(hop.from), to = parseVersion(hop.to);
  // The source only has to be catalogued for a minor hop, where its minor's latest patch
  // matters; a node may legitimately run a prerelease the snapshot does not list.
  const minorHop = to.minor !== from.minor;
  if (minorHop && !checkKnown(cat, from, [...at, "from"], out)) return;
  if (!checkKnown(cat, to, [...at, "to"], out)) return;
  const latest = latestPatch(cat, from);
  if (minorHop && latest && compareVersions(from, latest) !== 0) {
    out.push(
      issue(
        "MissingIntermediatePatch",
        `Upgrade to ${
          formatVersion(latest)
        }, the latest patch of ${from.major}.${from.minor}, before the minor hop to ${hop.to}`,
        [...at, "from"],
      ),
    );
  }
  const k8s = parseVersion(plan.spec.kubernetes.version);
  for (const v of [from, to]) {
    const row = supportRow(cat, v)!;
    if (!inWindow(row.kubernetes, k8s)) {
      out.push(
        issue(
          "KubernetesUnsupported",
          `Kubernetes ${plan.spec.kubernetes.version} is outside Talos ${row.minor}'s supported ${
            formatWindow(row.kubernetes)
          } (hop ${i})`,
          [...SPEC, "kubernetes", "version"],
        ),
      );
      break;
    }
  }
  const targetRow = supportRow(cat, to)!;
  if (!inWindow(targetRow.kubelet, parseVersion(plan.spec.kubernetes.kubelet))) {
    out.push(
      issue(
        "KubeletOutsideWindow",
        `Kubelet ${plan.spec.kubernetes.kubelet} is outside Talos ${targetRow.minor}'s window ${
          formatWindow(targetRow.kubelet)
        }`,
        [...SPEC, "kubernetes", "kubelet"],
      ),
    );
  }
}

/** Ordering, uniqueness, parallelism, deadlines and recovery; shared by the node-touching kinds. */
function commonRollout(
  spec: {
    nodes: readonly PlanNode[];
    rollout: { maxParallel: number };
    phases: {
      deadlines: Record<string, { transportSeconds: number; verificationSeconds: number }>;
    };
    recovery: readonly RecoveryAction[];
  },
  order: "workersFirst" | "controlPlanesFirst",
  out: Issues,
): void {
  checkNodes(spec.nodes, order, out);
  checkParallelism(spec.nodes, spec.rollout.maxParallel, out);
  checkDeadlines(spec.phases.deadlines, out);
  checkRecovery(spec.recovery, out);
}

function checkNodes(nodes: readonly PlanNode[], order: string, out: Issues): void {
  const names = new Set<string>(), addresses = new Set<string>();
  const first = order === "workersFirst" ? "worker" : "controlplane";
  let sawSecond = false, misordered = false;
  nodes.forEach((n, i) => {
    const at = [...SPEC, "nodes", i] as const;
    if (names.has(n.name)) {
      out.push(issue("NodeListInvalid", `Node "${n.name}" is listed twice`, [...at, "name"]));
    } else if (addresses.has(n.address)) {
      out.push(
        issue("NodeListInvalid", `Address ${n.address} is listed twice`, [...at, "address"]),
      );
    }
    names.add(n.name);
    addresses.add(n.address);
    if (n.role !== first) sawSecond = true;
    else if (sawSecond && !misordered) {
      // One report is enough: every later node of the first role is out of order for the same cause.
      misordered = true;
      const rule = first === "worker"
        ? "workers first, control planes last"
        : "control planes first, then workers";
      out.push(
        issue("NodeListInvalid", `Node "${n.name}" is out of order: ${rule}`, [...at, "role"]),
      );
    }
  });
}

function checkParallelism(nodes: readonly PlanNode[], maxParallel: number, out: Issues): void {
  if (maxParallel === 1) return;
  const path = [...SPEC, "rollout", "maxParallel"];
  const cps = nodes.filter((n) => n.role === "controlplane").length;
  if (cps > 1) {
    out.push(
      issue(
        "NodeListInvalid",
        `maxParallel ${maxParallel} would run ${
          Math.min(cps, maxParallel)
        } control planes at once; at most one at a time`,
        path,
      ),
    );
  } else {
    out.push(
      issue(
        "ParallelismUnsupported",
        `maxParallel ${maxParallel} is not supported; cairn changes one node at a time`,
        path,
      ),
    );
  }
}

function checkDeadlines(
  deadlines: Record<string, { transportSeconds: number; verificationSeconds: number }>,
  out: Issues,
): void {
  for (const [phase, d] of Object.entries(deadlines)) {
    if (d.transportSeconds > d.verificationSeconds) {
      out.push(
        issue(
          "DeadlinesInconsistent",
          `Phase ${phase}: transport deadline ${d.transportSeconds}s exceeds verification deadline ${d.verificationSeconds}s`,
          [...SPEC, "phases", "deadlines", phase, "transportSeconds"],
        ),
      );
    }
  }
}

function checkRecovery(actions: readonly RecoveryAction[], out: Issues): void {
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (seen.has(a.action)) {
      out.push(
        issue("RecoveryActionInvalid", `Recovery action ${a.action} is listed twice`, [
          ...SPEC,
          "recovery",
          i,
          "action",
        ]),
      );
    }
    seen.add(a.action);
  });
}

function checkKubernetesUpgrade(plan: KubernetesUpgradePlan, ctx: CheckContext, out: Issues) {
  const spec = plan.spec;
  const sound = checkStep(parseVersion(spec.from), parseVersion(spec.to), [...SPEC, "to"], out);
  const cat = usableCatalogue(spec.catalogue, ctx, out);
  const talos = parseVersion(spec.talosVersion);
  if (cat && checkKnown(cat, talos, [...SPEC, "talosVersion"], out) && sound) {
    const row = supportRow(cat, talos)!;
    if (!inWindow(row.kubernetes, parseVersion(spec.to))) {
      out.push(
        issue(
          "KubernetesUnsupported",
          `Kubernetes ${spec.to} is outside Talos ${row.minor}'s supported ${
            formatWindow(row.kubernetes)
          }`,
          [...SPEC, "to"],
        ),
      );
    }
  }
  // Kubernetes upgrades the control plane before kubelets (kubelet may not be newer).
  checkBreakpoints(plan, out);
  commonRollout(spec, "controlPlanesFirst", out);
}

function checkConfigApply(plan: ConfigApplyPlan, ctx: CheckContext, out: Issues) {
  const spec = plan.spec;
  const cat = usableCatalogue(spec.catalogue, ctx, out);
  const talos = parseVersion(spec.talosVersion);
  if (cat) checkKnown(cat, talos, [...SPEC, "talosVersion"], out);
  // A mode the plan's Talos minor rejects (1.14: REBOOT); the executor checks it again against
  // the minor each node runs. Otherwise the mode must fit the declared activation class.
  const rejected = modeRejectedByVersion(talos.minor, spec.mode);
  const misfit = rejected ?? modeFitsClass(spec.mode, spec.activation);
  if (misfit) {
    const message = rejected
      ? `Talos ${spec.talosVersion} rejects apply mode reboot`
      : `${misfit.message} (activation ${spec.activation})`;
    out.push(issue(misfit.reason, message, [...SPEC, "mode"]));
  }
  checkBreakpoints(plan, out);
  commonRollout(spec, "workersFirst", out);
}

function checkComponentUpgrade(plan: ComponentUpgradePlan, ctx: CheckContext, out: Issues) {
  const spec = plan.spec;
  const from = parseVersion(spec.from), to = parseVersion(spec.to);
  const c = compareVersions(to, from);
  if (c < 0) {
    out.push(
      issue("VersionDowngrade", `Cannot go from ${spec.from} to ${spec.to}: a downgrade`, [
        ...SPEC,
        "to",
      ]),
    );
  }
  if (c === 0) {
    out.push(issue("VersionUnchanged", `Source and target are both ${spec.from}`, [...SPEC, "to"]));
  }
  if (spec.catalogue) usableCatalogue(spec.catalogue, ctx, out);
  checkDeadlines(spec.phases.deadlines, out);
}
