/**
 * Wiring of a rehearsal, shared by `cairn rehearse` and the scenario tests: the twin process
 * (Kubernetes API simulator + Talos apid simulator), cairn's real adapters on the twin's virtual
 * clock, a journal, the plan bound and approved, and the named faults aimed at one node. Not a
 * command; heavy modules are imported lazily.
 */
import type { Fault } from "../sim/faults.ts";
import {
  buildPresets,
  type FaultPresetName,
  type PresetContext,
  type PresetEffect,
} from "../sim/fault_presets.ts";
import type { TwinControl } from "../sim/twin_control.ts";
import type { Journal } from "../ports/journal.ts";
import type { Kube } from "../ports/kube.ts";
import type { Logger } from "../ports/logger.ts";
import type { BoundPlan } from "../engine/executor/deps.ts";
import type { KubernetesUpgradePlan, TalosUpgradePlan } from "../domain/plan/schema.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";
import type { TwinProcess } from "./twin_process.ts";
import type { ClusterConnection } from "./run_plan.ts";
import type { TwinClock } from "../adapters/clock/twin_clock.ts";
import { type PhaseEvent, watchPhases } from "./phase_watch.ts";

/** The identity that takes operations over in `takeover-before-attempt`. */
export const TAKEOVER_OWNER = "ctl_rehearsal_takeover";

export interface RehearsalOptions {
  /** Cluster description file. */
  readonly cluster: string;
  /** Plan file path (for located errors) and its exact bytes. */
  readonly planPath: string;
  readonly planBytes: Uint8Array;
  /** The `.sig` text beside the plan, when signatures are to be checked. */
  readonly signatures?: string;
  /** Trust root to check signatures against; absent: the trust check is "not evaluated". */
  readonly allowedSignersPath?: string;
  /** Approvers required besides the author (default 1). */
  readonly requiredApprovals?: number;
  /** Repository root the bound files are read from (default: the plan's repository). */
  readonly repoRoot?: string;
  readonly faults: readonly FaultPresetName[];
  /** Node the faults aim at (default: the plan's first node). */
  readonly faultNode?: string;
  /** Raw twin faults armed besides the named ones. */
  readonly extraFaults?: readonly Fault[];
  /** Raw twin faults armed right after the fault node's commitment. */
  readonly afterCommitFaults?: readonly Fault[];
  readonly journalUrl: string;
  readonly log: Logger;
  readonly owner?: string;
  readonly pkiCacheDir?: string;
  readonly stateDir?: string;
}

export interface Rehearsal {
  readonly twin: TwinProcess;
  readonly control: TwinControl;
  readonly clock: TwinClock;
  readonly journal: Journal;
  readonly bound: BoundPlan<TalosUpgradePlan | KubernetesUpgradePlan>;
  readonly cluster: ClusterConnection;
  readonly faultNode: string;
  readonly effect: PresetEffect;
  run(
    opts?: { readonly signal?: AbortSignal; readonly onPhase?: (e: PhaseEvent) => void },
  ): Promise<RolloutOutcome>;
  /** The execution report of `outcome`, rendered from this rehearsal's journal as a real run's. */
  report(outcome: RolloutOutcome): Promise<string>;
  stop(): Promise<void>;
}

/** Starts the twin, binds the plan, arms the faults; `run()` executes the plan in virtual time. */
export async function startRehearsal(o: RehearsalOptions): Promise<Rehearsal> {
  const { startTwinProcess } = await import("./twin_process.ts");
  const twin = await startTwinProcess({
    cluster: await withComponentsFor(o),
    ...(o.pkiCacheDir ? { pkiCacheDir: o.pkiCacheDir } : {}),
    ...(o.stateDir ? { stateDir: o.stateDir } : {}),
  });
  const closers: Array<() => Promise<unknown> | void> = [() => twin.stop()];
  try {
    return await wire(o, twin, closers);
  } catch (e) {
    for (const c of closers.reverse()) await c();
    throw e;
  }
}

async function wire(
  o: RehearsalOptions,
  twin: TwinProcess,
  closers: Array<() => Promise<unknown> | void>,
): Promise<Rehearsal> {
  const { openJournal } = await import("../adapters/journal/by_url.ts");
  const { cryptoIdSource } = await import("../adapters/journal/ids.ts");
  const { parsePlan } = await import("../domain/plan/parse.ts");
  const { asTalosUpgrade, authorizeBeforeBind, bindPlan, executePlan } = await import(
    "../engine/executor/run_plan.ts"
  );
  const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
  const { connectTwin, twinExecutionTiming, twinInstallerResolver } = await import(
    "./twin_cluster.ts"
  );
  const { fileTrustRoot } = await import("./reconcile_wiring.ts");
  const { control, clock, cluster } = await connectTwin(twin);
  closers.push(() => cluster.close());
  const raw = await openJournal({ url: o.journalUrl, ids: cryptoIdSource(), nowMs: clock.now() });
  closers.push(() => raw.close());
  const parsed = await parsePlan(o.planBytes, { file: o.planPath });
  const owner = o.owner ?? "ctl_rehearsal";
  const timing = twinExecutionTiming(clock);
  const authority = {
    bytes: o.planBytes,
    signatures: o.signatures ?? "",
    requiredApprovals: o.requiredApprovals ?? 1,
    files: workingTreeBoundFiles(o.planPath, o.repoRoot ? { root: o.repoRoot } : {}),
    ...(o.allowedSignersPath ? { trust: fileTrustRoot(o.allowedSignersPath) } : {}),
    installers: await twinInstallerResolver(twin),
  };
  // The dispatch check before binding: a plan it refuses is journaled as refused, never bound.
  const refused = await authorizeBeforeBind({
    journal: raw,
    parsed,
    authority,
    cluster,
    clock,
    owner,
    callTimeoutMs: timing.callTimeoutMs,
  });
  const { asKubernetesUpgrade, bindKubernetesUpgrade, executeKubernetesUpgrade } = await import(
    "../engine/k8s_upgrade/run.ts"
  );
  const k8s = parsed.plan.kind === "KubernetesUpgrade";
  const binding = {
    parsed,
    bytes: o.planBytes,
    signatures: o.signatures ?? "",
    firstSeenCommit: "rehearsal",
    approver: { identity: "rehearsal", role: "approver" as const },
    nowMs: clock.now(),
  };
  const bound: BoundPlan<TalosUpgradePlan | KubernetesUpgradePlan> = refused
    ? { plan: k8s ? asKubernetesUpgrade(parsed) : asTalosUpgrade(parsed), digest: parsed.sha256 }
    : k8s
    ? await bindKubernetesUpgrade(raw, binding)
    : await bindPlan(raw, binding);
  const faultNode = o.faultNode ?? bound.plan.spec.nodes[0]!.name;
  const { effect, journal } = await armRehearsalFaults(
    o,
    await presetContext(cluster.kube, bound, faultNode),
    { raw, control, now: () => clock.now() },
  );
  return {
    twin,
    control,
    clock,
    journal,
    bound,
    cluster,
    faultNode,
    effect,
    run: (r = {}) => {
      if (refused) return Promise.resolve(refused);
      const run = {
        journal: r.onPhase
          ? watchPhases(journal, bound.plan.spec.nodes.map((n) => n.name), r.onPhase)
          : journal,
        cluster,
        authority,
        ...timing,
        log: o.log,
        owner,
        ...(r.signal ? { signal: r.signal } : {}),
      };
      return bound.plan.kind === "KubernetesUpgrade"
        ? executeKubernetesUpgrade({ ...run, bound: { plan: bound.plan, digest: bound.digest } })
        : executePlan({ ...run, bound: { plan: bound.plan, digest: bound.digest } });
    },
    report: async (outcome) => {
      const { rehearsalReport } = await import("./rehearsal_report.ts");
      return await rehearsalReport({
        journal: raw,
        parsed,
        planPath: o.planPath,
        requiredApprovals: o.requiredApprovals ?? 1,
        outcome,
        generatedAt: clock.now(),
      });
    },
    async stop() {
      for (const c of closers.splice(0).reverse()) await c();
    },
  };
}

async function presetContext(
  kube: Kube,
  bound: BoundPlan<TalosUpgradePlan | KubernetesUpgradePlan>,
  node: string,
) {
  const pods = (await kube.listPods(node)).items;
  const nodes = (await kube.listNodes()).items.map((n) => n.name);
  return {
    node,
    otherNodes: nodes.filter((n) => n !== node),
    pods: pods.map((p) => ({
      name: p.name,
      evictable: !p.daemonSet && !p.mirror && p.owner !== undefined &&
        p.phase !== "Succeeded" && p.phase !== "Failed",
      graceSeconds: p.terminationGracePeriodSeconds,
    })),
    // A KubernetesUpgrade drains nothing; its verification window is the control plane's.
    drainBoundSeconds: bound.plan.kind === "TalosUpgrade"
      ? bound.plan.spec.phases.drainTimeoutSeconds
      : 0,
    verifySeconds: bound.plan.kind === "TalosUpgrade"
      ? bound.plan.spec.phases.deadlines.verify.verificationSeconds
      : bound.plan.spec.phases.deadlines.controlPlane.verificationSeconds,
  };
}

/**
 * Arms a rehearsal's faults on the twin (the chosen presets, then the extra faults) and returns
 * the preset effect with the journal the executor uses under it; every plan kind's rehearsal
 * arms them the same way, around its own preset context.
 */
export async function armRehearsalFaults(
  o: Pick<RehearsalOptions, "faults" | "afterCommitFaults" | "extraFaults">,
  context: PresetContext,
  on: { raw: Journal; control: Pick<TwinControl, "arm">; now: () => number },
): Promise<{ effect: PresetEffect; journal: Journal }> {
  const presets = buildPresets(o.faults, context);
  const afterCommit = [...(presets.afterCommit ?? []), ...(o.afterCommitFaults ?? [])];
  const effect: PresetEffect = { ...presets, ...(afterCommit.length ? { afterCommit } : {}) };
  for (const f of [...effect.faults, ...(o.extraFaults ?? [])]) await on.control.arm(f);
  return { effect, journal: withPresetJournal(on.raw, effect, context.node, on.control, on.now) };
}

/** The journal the executor uses under a preset's journal-side effects. */
export function withPresetJournal(
  journal: Journal,
  effect: PresetEffect,
  node: string,
  control: Pick<TwinControl, "arm">,
  now: () => number,
): Journal {
  let j = journal;
  if (effect.afterCommit) j = armAfterCommit(j, node, effect.afterCommit, control);
  if (effect.journal === "takeover-before-attempt") j = takeoverBeforeFirstAttempt(j, node, now);
  return j;
}

/**
 * A journal that arms `faults` on the twin right after the target node's commitment, before
 * the executor's first attempt on it: the world changes between the bound identity and the
 * first mutation.
 */
export function armAfterCommit(
  journal: Journal,
  node: string,
  faults: readonly Fault[],
  control: Pick<TwinControl, "arm">,
): Journal {
  let done = false;
  const commit: Journal["commit"] = async (input) => {
    const r = await journal.commit(input);
    if (!done && r.ok && r.operation.machine === node) {
      done = true;
      for (const f of faults) await control.arm(f);
    }
    return r;
  };
  return new Proxy(journal, {
    get(target, prop) {
      if (prop === "commit") return commit;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * A journal through which another controller takes the target node's operation over right
 * before the executor's first attempt transaction on it: the executor's own attempt must then be
 * refused (stale owner generation) and nothing may be sent.
 */
export function takeoverBeforeFirstAttempt(
  journal: Journal,
  node: string,
  now: () => number,
): Journal {
  let done = false;
  const beginAttempt: Journal["beginAttempt"] = async (input) => {
    const op = done ? undefined : await journal.getOperation(input.operationId);
    if (op && op.machine === node) {
      done = true;
      const { epoch } = await journal.installation();
      await journal.takeOver({
        operationId: op.id,
        newOwner: TAKEOVER_OWNER,
        seenGen: op.ownerGen,
        epoch,
        actor: { identity: TAKEOVER_OWNER, role: "controller" },
        nowMs: now(),
      });
    }
    return await journal.beginAttempt(input);
  };
  return new Proxy(journal, {
    get(target, prop) {
      if (prop === "beginAttempt") return beginAttempt;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * The description the twin starts from: as given, except that a KubernetesUpgrade is rehearsed on
 * a twin that models the Kubernetes components (`spec.kubernetesComponents`, defaults unless the
 * description sets them): a copy in a temporary directory, the given file left as it is.
 */
async function withComponentsFor(o: RehearsalOptions): Promise<string> {
  const { parsePlan } = await import("../domain/plan/parse.ts");
  const parsed = await parsePlan(o.planBytes, { file: o.planPath });
  if (parsed.plan.kind !== "KubernetesUpgrade") return o.cluster;
  const { parse, stringify } = await import("yaml");
  const doc = parse(await Deno.readTextFile(o.cluster)) as { spec?: Record<string, unknown> };
  if (!doc.spec || doc.spec["kubernetesComponents"] !== undefined) return o.cluster;
  doc.spec["kubernetesComponents"] = {};
  const dir = await Deno.makeTempDir({ prefix: "cairn-rehearse-cluster-" });
  const path = `${dir}/cluster.yaml`;
  await Deno.writeTextFile(path, stringify(doc));
  return path;
}
