/**
 * Named regression scenarios of the ComponentUpgrade class (issue 16): Flux deliveries that look
 * done and are not, from public incidents. Each replays a fixed seed of the `ci` profile with a
 * ComponentUpgrade of its world (`component_kind.ts`) and a fixed Flux fault schedule, every
 * invariant checked, and asserts the end a correct executor reaches: only a merge observed applied,
 * Ready at its generation, with a passing after-merge round and still delivered when re-read, is
 * `completed`; a deadline reached short of that is `not-delivered` or `not-landed` (halted, never
 * completed or failed).
 */
import type { Scenario } from "./scenarios.ts";

/** A ci-profile world of four nodes whose ComponentUpgrade lands 115 s in and completes. */
export const COMPONENT_SCENARIO_SEED = 4;

const notDelivered = { state: "pending", end: "halted", reason: "ComponentNotDelivered" } as const;
const kind = "ComponentUpgrade";
const seed = COMPONENT_SCENARIO_SEED;

export const COMPONENT_SCENARIOS: readonly Scenario[] = [
  {
    name: "component-kustomization-ready-at-an-old-revision-is-not-delivered",
    incidents: ["fluxcd/flux2#1577", "devantler-tech/ksail#5576"],
    summary: "the Kustomization that applies the release stays Ready at the revision before the " +
      "merge (the chart moved anyway): Ready at an older revision is never a delivery",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "applied-old-revision" } }],
    expect: notDelivered,
  },
  {
    name: "component-helm-upgrade-rolled-back-looking-ready-is-not-delivered",
    incidents: ["fluxcd/flux2#4772", "fluxcd/helm-controller#1362", "helm/helm#4225"],
    summary: "the Helm upgrade fails and remediation rolls it back: the release is Ready again, " +
      "on the old chart (history[0]); not delivered, never completed on the Ready condition",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "helm-rolled-back" } }],
    expect: notDelivered,
  },
  {
    name: "component-stalled-kustomization-is-not-delivered",
    incidents: ["fluxcd/kustomize-controller#701", "bo0tzz/clusterfuck#746"],
    summary: "the Kustomization's apply of the merge fails its health checks and stalls (Ready " +
      "False, Stalled True): not delivered at the deadline",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "kustomization-failing", stalled: true } }],
    expect: notDelivered,
  },
  {
    name: "component-reconciliation-in-progress-forever-is-not-delivered",
    incidents: ["fluxcd/flux2#4818", "fluxcd/kustomize-controller#405"],
    summary: "the Kustomization stays 'Reconciliation in progress' (Ready Unknown) past the " +
      "deadline: a timeout, not delivered, neither completed nor failed",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "kustomization-progressing" } }],
    expect: notDelivered,
  },
  {
    name: "component-source-that-never-advances-is-not-delivered",
    incidents: ["fluxcd/source-controller#2089", "fluxcd/source-controller#544"],
    summary: "source-controller never fetches the merge: every part stays at the base revision " +
      "until the deadline; not delivered",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "source-stuck" } }],
    expect: notDelivered,
  },
  {
    name: "component-delivery-past-the-deadline-is-a-timeout-not-a-failure",
    incidents: ["fluxcd/kustomize-controller#709", "fluxcd/kustomize-controller#701"],
    summary: "Flux is slow (every step 25 minutes late): the deadline passes before the merge " +
      "arrives; not delivered (a timeout decides nothing), no after-merge round counted",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "slow", extraMs: 1_500_000 } }],
    expect: notDelivered,
  },
  {
    name: "component-later-commit-containing-the-merge-completes",
    incidents: ["fluxcd/flux2#1577"],
    summary: "Flux applies a later commit of the watched branch, which git says contains the " +
      "merge: that is a delivery of it, and the run completes",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "applies", commit: "later" } }],
    expect: { state: "pending", end: "completed" },
  },
  {
    name: "component-revision-git-does-not-know-is-not-delivered",
    incidents: ["fluxcd/source-controller#544"],
    summary: "Flux applies a commit the controller's git has not fetched: not known to contain " +
      "the merge is not 'contains'; not delivered",
    seed,
    kind,
    events: () => [{ kind: "flux", fault: { kind: "applies", commit: "unknown" } }],
    expect: notDelivered,
  },
  {
    name: "component-delivery-that-goes-back-before-completion-is-not-completed",
    incidents: ["devantler-tech/ksail#5576", "fluxcd/flux2#1577"],
    summary: "the merge lands, the first after-merge rounds fail (a node's apid unhealthy for a " +
      "minute), and meanwhile the branch is force-pushed without the merge " +
      "and Flux applies that tip, Ready: the delivery is read again before completed, and the " +
      "run is not completed",
    seed,
    kind,
    events: () => [{
      kind: "flux",
      fault: { kind: "regress", afterMs: 10_000, how: "force-push", holdMs: 60_000 },
    }],
    expect: notDelivered,
  },
  {
    name: "component-agent-pod-never-ready-is-not-landed",
    incidents: ["fluxcd/kustomize-controller#709", "fluxcd/flux2#1193"],
    summary: "Flux delivered the chart, but one node's new agent pod never gets ready and the " +
      "DaemonSet rollout stalls there: not landed (the pods still on the old image named)",
    seed,
    kind,
    events: ({ cleanNodes }) => [{
      kind: "twin",
      fault: {
        kind: "daemon-pod-not-ready",
        point: "kube.daemonPod",
        target: cleanNodes[0]!,
        params: { daemonset: "cilium" },
      },
    }],
    expect: { state: "pending", end: "halted", reason: "ComponentNotLanded" },
  },
  {
    name: "component-lagging-flux-reads-still-complete",
    incidents: ["argoproj/argo-cd#14442", "devantler-tech/ksail#5576"],
    summary: "most Flux and pod reads come back as the previous answer (a lagging cache): the " +
      "run completes on reads that show the merge, never earlier",
    seed,
    kind,
    events: () => [{ kind: "stale", read: "lagging-cache", p: 0.6 }],
    expect: { state: "pending", end: "completed" },
  },
];
