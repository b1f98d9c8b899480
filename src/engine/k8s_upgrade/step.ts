/**
 * One operation of a KubernetesUpgrade: one component on one node (docs/plans.md#plan-kinds).
 * Gate, the plan's dispatch check and the Kubernetes check again (rows 23–25 on current
 * evidence, the step's component judged at the target), the machine's identity, the commitment;
 * then through the one mutation path (`mutate` → `mutateThrough`): the image pre-pull (only here,
 * never in a preview) and the configuration change naming the new image (ApplyConfiguration
 * NO_REBOOT, the machine configuration re-read just before); then the component observed at the
 * target version and ready on both sides (Talos StaticPodStatus and the mirror pod, or the Node's
 * kubelet version), the post-gate and a completion observation whose reading is recorded as a
 * typed fact. A halt is classified, never retried.
 */
import {
  componentImage,
  imagePath,
  retag,
  type UpgradeComponent,
  withComponentImage,
} from "../../domain/k8s_upgrade/machine_config.ts";
import type { PostconditionReading } from "../../domain/operation.ts";
import type { KubernetesUpgradePlan, PhaseDeadline, PlanNode } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { BoundPlan, ExecutorDeps, StepState } from "../executor/deps.ts";
import { digestOf } from "../executor/digests.ts";
import { postGateWithin } from "../executor/verify_phase.ts";
import {
  healthText,
  unestablishedReason,
  verdictForTarget,
  withPostGate,
} from "../executor/health_elsewhere.ts";
import { commitStep, dispatchCheckBefore } from "../executor/commit_step.ts";
import { gateBefore } from "../executor/gate_wait.ts";
import { underNoiseLease } from "../executor/step_lease.ts";
import { postHooksBeforeVerifying, startHooks } from "../executor/step_hooks.ts";
import { errorText, mutate, talosSent } from "../executor/mutation.ts";
import { controllerActor } from "../executor/observe.ts";
import { completionRead } from "../executor/completion_read.ts";
import {
  haltUnresolved,
  type NodeOutcome,
  notCommitted,
  outcome,
  stoppedMidStep,
  transition,
} from "../executor/step_outcome.ts";
import { checkKubernetes } from "./preflight_check.ts";
import { configVersionFloor, configVersionOf } from "./config_floor.ts";
import { kubeProxyAfterConfig, type KubeProxyKit, kubeProxyPrecheck } from "./kube_proxy_step.ts";
import { imageTag, readStaticPod, type StaticPod } from "./read_evidence.ts";

/** One operation of the rollout. */
export interface ComponentStep {
  readonly node: PlanNode;
  readonly component: UpgradeComponent;
  readonly key: string;
}

/** The step key of a component on a node. */
export function componentStepKey(node: string, component: UpgradeComponent): string {
  return `${node}/k8s/${component}`;
}

/**
 * The rollout's operations in order: as `talosctl upgrade-k8s` does it, each control-plane
 * component on every control plane one node at a time (apiserver, controller-manager,
 * scheduler), then kube-proxy (each control plane's `cluster.proxy.image`, the DaemonSet moved
 * by the last control plane's operation), then the kubelets of every node in plan order.
 */
export function componentSteps(plan: KubernetesUpgradePlan): ComponentStep[] {
  const cps = plan.spec.nodes.filter((n) => n.role === "controlplane");
  const out: ComponentStep[] = [];
  for (
    const component of [
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "kube-proxy",
    ] as const
  ) {
    for (const node of cps) {
      out.push({
        node,
        component,
        key: componentStepKey(node.name, component),
      });
    }
  }
  for (const node of plan.spec.nodes) {
    out.push({ node, component: "kubelet", key: componentStepKey(node.name, "kubelet") });
  }
  return out;
}

/** The bound postcondition of a step: the component at `version` and ready on `node`. */
export function componentPostText(
  cluster: string,
  node: string,
  component: UpgradeComponent,
  version: string,
  ready: boolean,
): string {
  return `post:k8s:${cluster}/${node}/${component}@${version}|ready=${ready}`;
}

type Step = StepState<KubernetesUpgradePlan>;
type Bound = BoundPlan<KubernetesUpgradePlan>;

const MACHINE_CONFIG = {
  namespace: "config",
  type: "MachineConfigs.config.talos.dev",
  id: "v1alpha1",
} as const;
const PODS = { group: "", version: "v1", plural: "pods", namespaced: true } as const;

function deadlineOf(plan: KubernetesUpgradePlan, c: UpgradeComponent) {
  return c === "kubelet"
    ? plan.spec.phases.deadlines.kubelet
    : plan.spec.phases.deadlines.controlPlane;
}

/** Runs one component step; see the module comment. */
export async function runComponentStep(
  deps: ExecutorDeps,
  bound: Bound,
  step: ComponentStep,
): Promise<NodeOutcome> {
  const { node, component } = step;
  const plan = bound.plan;
  const deadline = deadlineOf(plan, component);
  const readMs = deps.callTimeoutMs(deadline.transportSeconds * 1000);
  const held = await gateBefore(deps, bound, node.name, deadline.verificationSeconds * 1000);
  if (held) return held;
  const stop = await dispatchCheckBefore(deps, bound, node);
  if (stop) return stop;
  // Rows 23–25 again, now: a GitOps manager may have appeared, a node may have moved.
  const k8s = await checkKubernetes({
    journal: deps.journal,
    owner: deps.owner,
    digest: bound.digest,
    plan,
    cluster: deps,
    nowMs: () => deps.clock.now(),
    timeoutMs: readMs,
    step: { key: step.key, node: node.name, component },
  });
  if (k8s.stop) {
    return notCommitted(node.name, k8s.stop.reason, k8s.stop.detail, k8s.stop.refused);
  }
  if (component === "kube-proxy") {
    // A GitOps manager owning kube-proxy's containers refuses before anything is committed.
    const proxy = await kubeProxyPrecheck(deps.kube, readMs);
    if (proxy) return notCommitted(node.name, proxy.reason, proxy.detail, proxy.refused);
  }
  const current = await readConfig(deps, node.address, readMs);
  const image = current.ok ? componentImage(current.config, component) : undefined;
  if (!image) {
    return notCommitted(
      node.name,
      "ComponentConfigUnreadable",
      current.ok
        ? `${node.name}'s machine configuration names no ${imagePath(component)}`
        : current.error,
    );
  }
  if (imageTag(image) === plan.spec.to) {
    // A target reached out of band cannot complete an unattempted operation.
    return notCommitted(
      node.name,
      "TargetReachedOutOfBand",
      `${node.name}'s configuration already names ${image}`,
    );
  }
  const committed = await commitStep(deps, bound, node, step.key);
  if (!committed.ok) return committed.outcome;
  // The step's expected-noise silences live exactly as long as it does.
  return await underNoiseLease(committed.state, async (s) => {
    try {
      // Pre hooks first, before anything is sent to the node; one that does not succeed holds it.
      const hook = await startHooks(s);
      if (hook) return await haltUnresolved(s, hook.reason, hook.detail);
      return await upgrade(s, component, retag(image, plan.spec.to));
    } catch (e) {
      if (deps.signal?.aborted) {
        return await stoppedMidStep(s, deps.signal.reason);
      }
      return await haltUnresolved(s, "ExecutorError", errorText(e));
    }
  });
}

async function readConfig(
  deps: Pick<ExecutorDeps, "talos">,
  address: string,
  timeoutMs: number,
): Promise<{ ok: true; config: string; version: string } | { ok: false; error: string }> {
  try {
    const r = await deps.talos.resource(address, MACHINE_CONFIG, { timeoutMs });
    return { ok: true, config: r.yamlSpec, version: r.version };
  } catch (e) {
    return {
      ok: false,
      error: `the machine configuration of ${address} could not be read: ${errorText(e)}`,
    };
  }
}

/**
 * The machine configuration read for a change: read again each poll while it answers a version
 * older than the floor this plan's journal proves (config_floor.ts), until the change's transport
 * window passes; `stale` when it never caught up.
 */
async function readConfigAtLeast(
  s: Step,
  deadline: PhaseDeadline,
): Promise<
  | { ok: true; config: string; version: string; stale: boolean; floor?: bigint }
  | { ok: false; error: string }
> {
  const { clock } = s.deps;
  const windowMs = deadline.transportSeconds * 1000;
  const until = clock.now() + windowMs;
  const floor = await configVersionFloor(s.deps.journal, s.bound.digest, s.node, s.operationId);
  for (;;) {
    const left = Math.max(0, until - clock.now());
    const r = await readConfig(s.deps, s.address, s.deps.callTimeoutMs(left));
    if (!r.ok || floor === undefined) return r.ok ? { ...r, stale: false } : r;
    const v = configVersionOf(r.version);
    // A version that is not a number cannot be compared: judged as before, on the read itself.
    if (v === undefined || v >= floor) return { ...r, stale: false };
    if (clock.now() + s.deps.pollIntervalMs > until) return { ...r, stale: true, floor };
    await clock.sleep(s.deps.pollIntervalMs, s.deps.signal);
  }
}

async function upgrade(s: Step, component: UpgradeComponent, target: string): Promise<NodeOutcome> {
  const plan = s.bound.plan;
  const deadline = deadlineOf(plan, component);
  const route = `apid:node=${s.address}`;
  // kube-proxy's image is not pre-pulled (upgrade-k8s does not): each node's kubelet pulls it
  // when the DaemonSet replaces its pod.
  if (component !== "kube-proxy") {
    const stop = await prePull(s, component, target, deadline, route);
    if (stop) return stop;
  }
  return await changeConfig(s, component, target, deadline, route);
}

/** The pre-pull; a stop when it was refused or not accepted. */
async function prePull(
  s: Step,
  component: UpgradeComponent,
  target: string,
  deadline: PhaseDeadline,
  route: string,
): Promise<NodeOutcome | undefined> {
  // Pre-pull, as upgrade-k8s does: static pod images into the CRI namespace, the kubelet's
  // into the system one. Only here, after the commitment; a preview never pulls.
  const containerd = component === "kubelet"
    ? { driver: "CRI", namespace: "NS_SYSTEM" } as const
    : { driver: "CRI", namespace: "NS_CRI" } as const;
  const pulled = await mutate(s, {
    phase: "pull",
    request: {
      rpc: "ImageService.Pull",
      node: s.node,
      address: s.address,
      image: target,
      containerd,
    },
    route,
    deadline,
    send: async (ms) =>
      talosSent(await s.deps.talos.pull(s.address, target, containerd, { timeoutMs: ms })),
  });
  if (pulled.kind === "refused") return await haltUnresolved(s, pulled.reason, pulled.detail);
  if (pulled.sent.responseClass !== "accepted") {
    const lost = pulled.sent.responseClass === "lost" ||
      pulled.sent.responseClass === "transport-failure";
    return await haltUnresolved(s, lost ? "PullResponseLost" : "PullRefused", pulled.sent.detail);
  }
  return undefined;
}

/** The configuration change naming `target`, then the component observed. */
async function changeConfig(
  s: Step,
  component: UpgradeComponent,
  target: string,
  deadline: PhaseDeadline,
  route: string,
): Promise<NodeOutcome> {
  // The configuration is re-read right before the change: the apply replaces the whole document,
  // so it must be based on a read no older than what this plan's earlier changes left.
  const fresh = await readConfigAtLeast(s, deadline);
  if (fresh.ok && fresh.stale) {
    return await haltUnresolved(
      s,
      "ComponentConfigStale",
      `${s.node}'s machine configuration read at version ${fresh.version}, older than version ` +
        `${fresh.floor} this plan's earlier change left, until the transport deadline; ` +
        `a whole-document apply on it would undo that change, so nothing was sent`,
    );
  }
  const next = fresh.ok ? withComponentImage(fresh.config, component, target) : undefined;
  if (!next) {
    return await haltUnresolved(
      s,
      "ComponentConfigUnreadable",
      fresh.ok ? `the configuration no longer names ${imagePath(component)}` : fresh.error,
    );
  }
  const data = new TextEncoder().encode(next);
  const applied = await mutate(s, {
    phase: "component-config",
    request: {
      rpc: "MachineService.ApplyConfiguration",
      node: s.node,
      address: s.address,
      mode: "NO_REBOOT",
      dryRun: false,
      component,
      field: imagePath(component),
      image: target,
      // The configuration holds secrets: its digest is recorded, never its text.
      configSha256: await digestOf(next),
      basedOnConfigVersion: fresh.ok ? fresh.version : null,
    },
    route,
    deadline,
    send: async (ms) =>
      talosSent(
        await s.deps.talos.applyConfiguration(
          s.address,
          { data, mode: "NO_REBOOT", dryRun: false },
          {
            timeoutMs: ms,
          },
        ),
      ),
  });
  if (applied.kind === "refused") return await haltUnresolved(s, applied.reason, applied.detail);
  if (applied.sent.responseClass !== "accepted") {
    const lost = applied.sent.responseClass === "lost" ||
      applied.sent.responseClass === "transport-failure";
    return await haltUnresolved(
      s,
      lost ? "ConfigApplyResponseLost" : "ConfigApplyRefused",
      applied.sent.detail,
    );
  }
  if (component === "kube-proxy") {
    const basedOn = fresh.ok ? configVersionOf(fresh.version) : undefined;
    return await kubeProxyAfterConfig(s, target, stepKit, basedOn);
  }
  return await observeAndSettle(s, component);
}

/** What a component read found on both sides. */
interface ComponentReading {
  readonly talosVersion: string | undefined;
  readonly talosReady: boolean | undefined;
  readonly kubeVersion: string | undefined;
  readonly kubeReady: boolean | undefined;
  /** For the apiserver: what `/version` answered through the endpoint (the oldest ready one). */
  readonly served?: string | undefined;
  readonly objectUid: string;
  readonly resourceVersion: string;
}

async function readComponent(
  s: Step,
  component: UpgradeComponent,
  timeoutMs: number,
): Promise<ComponentReading> {
  const { talos, kube } = s.deps;
  if (component === "kubelet") {
    const node = await kube.getNode(s.node, { timeoutMs }).catch(() => undefined);
    return {
      talosVersion: undefined,
      talosReady: undefined,
      kubeVersion: node?.kubeletVersion || undefined,
      kubeReady: node?.ready,
      objectUid: node?.uid ?? "",
      resourceVersion: node?.resourceVersion ?? "",
    };
  }
  const [pod, mirror, served] = await Promise.all([
    readStaticPod(talos, s.address, component as StaticPod, s.node, timeoutMs).catch(() =>
      undefined
    ),
    kube.getObject(PODS, `${component}-${s.node}`, "kube-system", { timeoutMs }).catch(() =>
      undefined
    ),
    component === "kube-apiserver"
      ? kube.serverVersion().then((v) => v.gitVersion, () => undefined)
      : Promise.resolve(undefined),
  ]);
  const spec = mirror?.spec as { containers?: { image?: string }[] } | undefined;
  const status = mirror?.status as
    | { conditions?: { type?: string; status?: string }[] }
    | undefined;
  return {
    talosVersion: pod?.version,
    talosReady: pod?.ready,
    kubeVersion: spec?.containers?.[0]?.image ? imageTag(spec.containers[0].image) : undefined,
    kubeReady: mirror
      ? (status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
      : undefined,
    ...(component === "kube-apiserver" ? { served } : {}),
    objectUid: mirror?.metadata?.uid ?? "",
    resourceVersion: mirror?.metadata?.resourceVersion ?? "",
  };
}

/**
 * The postcondition reading: every side that must be read (Talos's status and the mirror pod for
 * a static pod, the Node for a kubelet) at the target version and ready establishes it; a side
 * read at another version or not ready contradicts it; otherwise it is unreadable.
 */
export function componentReading(
  component: UpgradeComponent,
  r: Pick<ComponentReading, "talosVersion" | "talosReady" | "kubeVersion" | "kubeReady">,
  to: string,
): PostconditionReading {
  const sides = component === "kubelet"
    ? [[r.kubeVersion, r.kubeReady] as const]
    : [[r.talosVersion, r.talosReady] as const, [r.kubeVersion, r.kubeReady] as const];
  if (sides.some(([v, ready]) => (v !== undefined && v !== to) || ready === false)) {
    return "contradicted";
  }
  return sides.every(([v, ready]) => v === to && ready === true) ? "established" : "unreadable";
}

function summaryOf(component: UpgradeComponent, r: ComponentReading): string {
  const side = (v: string | undefined, ready: boolean | undefined) =>
    `${v ?? "unreadable"}${ready === undefined ? "" : ready ? " ready" : " not ready"}`;
  return component === "kubelet"
    ? `kubelet ${side(r.kubeVersion, r.kubeReady)} (Node status.nodeInfo)`
    : `${component} ${side(r.talosVersion, r.talosReady)} (Talos StaticPodStatus), mirror pod ` +
      side(r.kubeVersion, r.kubeReady) +
      (component === "kube-apiserver"
        ? `, /version through the endpoint ${r.served ?? "unreadable"}`
        : "");
}

/** One look at a component after its change: the reading, in words, with what was read. */
export interface ComponentLook {
  readonly reading: PostconditionReading;
  readonly summary: string;
  /** The version the look found (bound into the completion read's digest). */
  readonly version: string | undefined;
  readonly objectUid: string;
  readonly resourceVersion: string;
}

async function observeAndSettle(s: Step, component: UpgradeComponent): Promise<NodeOutcome> {
  const to = s.bound.plan.spec.to;
  const timeoutMs = s.deps.callTimeoutMs(
    deadlineOf(s.bound.plan, component).transportSeconds * 1000,
  );
  return await settle(s, component, async () => {
    const r = await readComponent(s, component, timeoutMs);
    return {
      reading: componentReading(component, r, to),
      summary: summaryOf(component, r),
      version: component === "kubelet" ? r.kubeVersion : r.talosVersion,
      objectUid: r.objectUid,
      resourceVersion: r.resourceVersion,
    };
  });
}

/**
 * After the change: looks until the component is established or its verification window ends,
 * records what was seen as a `component-observed` fact, runs the post-gate, and takes the
 * completion read (a fresh look) whose reading decides the operation's state.
 */
async function settle(
  s: Step,
  component: UpgradeComponent,
  look: () => Promise<ComponentLook>,
): Promise<NodeOutcome> {
  const deadline = deadlineOf(s.bound.plan, component);
  const until = s.deps.clock.now() + deadline.verificationSeconds * 1000;
  let r = await look();
  while (r.reading !== "established" && s.deps.clock.now() < until) {
    await s.deps.clock.sleep(
      Math.min(s.deps.pollIntervalMs, Math.max(1, until - s.deps.clock.now())),
      s.deps.signal,
    );
    r = await look();
  }
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: "component-observed",
    kind: "fact",
    detail: { component, summary: r.summary, reading: r.reading },
    nowMs: s.deps.clock.now(),
  });
  // The post hooks the step owes run before it verifies; one that does not succeed holds it.
  const owed = await postHooksBeforeVerifying(s, r.reading === "established");
  if (owed) return await haltUnresolved(s, owed.reason, owed.detail);
  await transition(
    s,
    "verifying",
    "CompletionObserved",
    "every attempt accepted; verifying the component",
  );
  // A component that just restarted may raise a brief alert or lag a read: rounds until one passes
  // within its verification window.
  const post = await postGateWithin(s, deadline.verificationSeconds * 1000);
  // The completion read: ordered after the last accounting (its basis is allocated now). A read
  // that shows nothing (an answer from before the change, a lost one) is taken again, each time
  // with a fresh basis, while the verification window lasts: it judges nothing either way.
  const actor = controllerActor(s.deps.owner);
  const { basis, reading: last } = await completionRead(s, {
    windowMs: Math.max(0, until - s.deps.clock.now()),
    read: look,
    readAgain: (l) => l.reading === "unreadable",
  });
  const reading = withPostGate(last.reading, post);
  const version = last.version;
  const plan = s.bound.plan;
  const summary = `${last.summary}; health=${healthText(post)}; postconditions=${reading}`;
  const rec = await s.deps.journal.recordObservation({
    machine: s.node,
    purpose: "completion",
    planDigest: s.bound.digest,
    operationId: s.operationId,
    basis,
    digest: await digestOf(
      componentPostText(
        plan.metadata.cluster,
        s.node,
        component,
        version ?? "unreadable",
        reading === "established",
      ),
    ),
    objectUid: last.objectUid,
    resourceVersion: last.resourceVersion,
    observedGeneration: 0,
    observedAtMs: s.deps.clock.now(),
    summary,
    postcondition: reading,
    actor,
  });
  if (reading === "established") {
    await transition(s, "completed", "CompletionObserved", summary, rec.id);
    return outcome(s, "completed", "CompletionObserved", summary);
  }
  if (reading === "contradicted") {
    const reason: Reason = verdictForTarget(post) === "fail"
      ? "VerificationHealthFailed"
      : "ComponentVersionContradicted";
    await transition(s, "failed", reason, summary, rec.id);
    return outcome(s, "failed", reason, summary);
  }
  const why = unestablishedReason(last.reading, post);
  await transition(s, "unresolved", why, summary);
  return outcome(s, "unresolved", why, summary);
}

/** What `kube_proxy_step.ts` borrows: this module's settle and the config read. */
const stepKit: KubeProxyKit = {
  settle,
  readConfig: (s, timeoutMs) => readConfig(s.deps, s.address, timeoutMs),
};
