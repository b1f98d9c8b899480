import type { KubeNode } from "../../ports/kube.ts";
import type { Plan, TalosHop } from "../../domain/plan/schema.ts";
import type { Verdict } from "../../domain/health/types.ts";
import type { PostconditionReading } from "../../domain/operation.ts";
import type { RoundPurpose, RoundVerdict, StepState } from "./deps.ts";
import { digestOf, postconditionText } from "./digests.ts";
import { failed, halt, type PhaseResult, proceed, unresolved } from "./halt.ts";
import { controllerActor } from "./observe.ts";
import { completionRead } from "./completion_read.ts";
import { stallAfterMs, StallWatch } from "../operating/stall.ts";

/** Kubernetes node annotation where Talos publishes the running schematic id. */
export const SCHEMATIC_ANNOTATION = "extensions.talos.dev/schematic";

interface BootReading {
  readonly version: string | undefined;
  readonly bootId: string | undefined;
  readonly ready: boolean;
  readonly schematic: string | undefined;
  /** The Kubernetes node as read (identity and version of the observation). */
  readonly node: KubeNode | undefined;
}

async function readBoot(s: StepState, timeoutMs: number): Promise<BootReading> {
  const opts = { timeoutMs: s.deps.callTimeoutMs(timeoutMs) };
  const [bootId, rest] = await Promise.all([
    s.deps.talos.bootId(s.address, opts).catch(() => undefined),
    readVersionAndNode(s, opts),
  ]);
  return { ...rest, bootId };
}

/** The running version and the Node object (Ready, schematic annotation), read at once. */
async function readVersionAndNode(
  s: StepState,
  opts: { readonly timeoutMs: number },
): Promise<Omit<BootReading, "bootId">> {
  const [version, node] = await Promise.all([
    s.deps.talos.version(s.address, opts).then((v) => v.tag, () => undefined),
    s.deps.kube.getNode(s.node, opts).catch(() => undefined),
  ]);
  return {
    version,
    ready: node?.ready ?? false,
    schematic: node?.annotations[SCHEMATIC_ANNOTATION],
    node,
  };
}

/** One poll of the reboot wait: a new boot's full reading, or the boot id that showed none. */
type BootPoll =
  | { readonly newBoot: true; readonly reading: BootReading }
  | { readonly newBoot: false; readonly bootId: string | undefined };

/**
 * The boot id first; the version and the Node object only once it shows a new boot. Before that
 * nothing else can judge the boot (an old boot's version or Ready decides nothing), and while the
 * node is down every other read would only fail: two of a poll's three requests and most of the
 * wait's failed calls (issue 18).
 */
async function pollBoot(s: StepState, deadline: number, bootIdBefore: string): Promise<BootPoll> {
  // Each read gets the phase time left when it starts, at least 1 ms.
  const opts = () => ({
    timeoutMs: s.deps.callTimeoutMs(Math.max(1, deadline - s.deps.clock.now())),
  });
  // The wait polls: a boot id refused while the machine is down is asked again next poll, not
  // three times now.
  const bootId = await s.deps.talos.bootId(s.address, { ...opts(), attempts: 1 })
    .catch(() => undefined);
  if (bootId === undefined || bootId === bootIdBefore) return { newBoot: false, bootId };
  return { newBoot: true, reading: { ...(await readVersionAndNode(s, opts())), bootId } };
}

/** What a poll showed, for the stall report and the unresolved end. */
function pollText(p: BootPoll | undefined): string {
  if (p === undefined) return "not read";
  if (!p.newBoot) {
    return `no new boot (boot id ${p.bootId === undefined ? "unreadable" : "unchanged"})`;
  }
  const r = p.reading;
  return `new boot, version=${r.version ?? "unreadable"}, ready=${r.ready}`;
}

/**
 * Waits for the node to come back from the reboot: a new boot ID, the hop's target version and
 * Ready, until the reboot's verification deadline. A node that boots back into the old version
 * with a new boot ID contradicts the postcondition (seed 004's loop-device revert); a node that
 * is not seen back by the deadline is unresolved, never failed.
 *
 * A new boot that reads another version is read again until the deadline before it is final: the
 * version and the boot id are separate reads, and a read answered from an earlier answer (a
 * lagging apid proxy or cache, issue 16) shows the old boot's version beside the new boot's id.
 * An earlier answer can never show the target, so the target read once is the boot; the other
 * version still read at the deadline is `failed`.
 */
export async function awaitBoot(
  s: StepState,
  hop: TalosHop,
  bootIdBefore: string,
): Promise<PhaseResult> {
  const { clock, pollIntervalMs } = s.deps;
  const deadline = clock.now() +
    s.bound.plan.spec.phases.deadlines.reboot.verificationSeconds * 1000;
  let last: BootPoll | undefined;
  /** The last new boot read with another version, judged at the deadline. */
  let other: BootReading | undefined;
  // A node that does not come back is reported while the step still waits for it.
  const stall = new StallWatch(s, "reboot");
  const stallMs = stallAfterMs(
    s,
    s.bound.plan.spec.phases.deadlines.reboot.verificationSeconds * 1000,
  );
  const waitingSince = clock.now();
  /** When (into the wait) the last poll that did not see the node back began. */
  let notBackMs = 0;
  while (clock.now() < deadline) {
    const sleepMs = s.deps.rebootPace?.sleepMs(clock.now() - waitingSince, pollIntervalMs) ??
      pollIntervalMs;
    await clock.sleep(Math.min(sleepMs, deadline - clock.now()), s.deps.signal);
    const polledMs = clock.now() - waitingSince;
    last = await pollBoot(s, deadline, bootIdBefore);
    if (last.newBoot) {
      const r = last.reading;
      if (r.ready && r.version === hop.to) {
        s.deps.rebootPace?.seen(notBackMs, polledMs);
        await recordBootObserved(s, r);
        return proceed(undefined);
      }
      if (r.ready && r.version !== undefined) other = r;
    }
    notBackMs = polledMs;
    stall.blocked({
      name: `node ${s.node}`,
      holding: `boot into ${hop.to}`,
      detail: `not back: ${pollText(last)}`,
    }, waitingSince);
    await stall.check(clock.now(), stallMs);
  }
  if (other) {
    await recordBootObserved(s, other);
    return halt(failed("BootedOtherVersion", `node booted ${other.version}, expected ${hop.to}`));
  }
  return halt(unresolved(
    "BootNotObserved",
    `no boot into ${hop.to} seen by the reboot deadline (last: ${pollText(last)})`,
  ));
}

async function recordBootObserved(s: StepState, r: BootReading): Promise<void> {
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: "boot-observed",
    kind: "fact",
    detail: {
      version: r.version ?? null,
      bootId: r.bootId ?? null,
      schematic: r.schematic ?? null,
    },
    nowMs: s.deps.clock.now(),
  });
}

/**
 * The readers that judge the target node itself. Before the uncordon, workloads pinned to the
 * node cannot be back yet, so verification rounds there cover only these; the full policy runs
 * as the post-gate after the uncordon.
 */
export const NODE_READERS = ["nodes", "node-versions", "talos-etcd", "talos-services"] as const;

/**
 * Runs fresh health rounds until one passes or the verify deadline passes. A failing check
 * before the deadline keeps verifying (never advances); at the deadline a fail is final and an
 * unreadable round stays unresolved.
 */
export async function roundsUntilPass(
  s: StepState,
  purpose: RoundPurpose,
  operationOwnedCordon: boolean,
  readers?: readonly string[],
): Promise<RoundVerdict> {
  const { clock, health, pollIntervalMs } = s.deps;
  const deadline = clock.now() +
    s.bound.plan.spec.phases.deadlines.verify.verificationSeconds * 1000;
  while (true) {
    const r = await health.round(purpose, {
      target: { node: s.node, operationOwnedCordon },
      operationId: s.operationId,
      ...(readers ? { readers } : {}),
    });
    if (r.verdict === "pass" || clock.now() >= deadline) return r;
    await clock.sleep(Math.min(pollIntervalMs, Math.max(1, deadline - clock.now())), s.deps.signal);
  }
}

/**
 * Post-gate rounds until one passes or `windowMs` ends, for the kinds whose node comes back from a
 * restart or a reboot (a KubernetesUpgrade component, a ConfigApply node): a failing round before
 * the deadline keeps verifying, at the deadline the last round decides, and a stop signal ends
 * the wait with the last round.
 */
export async function postGateWithin<P extends Plan>(
  s: StepState<P>,
  windowMs: number,
): Promise<RoundVerdict> {
  const { clock, health, pollIntervalMs } = s.deps;
  const until = clock.now() + windowMs;
  while (true) {
    const r = await health.round("post-gate", {
      target: { node: s.node, operationOwnedCordon: false },
      operationId: s.operationId,
    });
    if (r.verdict === "pass" || clock.now() >= until || s.deps.signal?.aborted) return r;
    await clock.sleep(Math.min(pollIntervalMs, Math.max(1, until - clock.now())), s.deps.signal);
  }
}

/**
 * What a completion read established about the bound postconditions (target version, schematic,
 * bound health): any value that was read and differs contradicts them, whatever else could not be
 * read; otherwise a value that could not be read leaves them unreadable.
 */
export function postconditionReading(
  read: { readonly version: string | undefined; readonly schematic: string | undefined },
  hop: TalosHop,
  healthVerdict: Verdict,
): PostconditionReading {
  const differs = (read.version !== undefined && read.version !== hop.to) ||
    (read.schematic !== undefined && read.schematic !== hop.installer.schematic) ||
    healthVerdict === "fail";
  if (differs) return "contradicted";
  const unread = read.version === undefined || read.schematic === undefined ||
    healthVerdict !== "pass";
  return unread ? "unreadable" : "established";
}

/**
 * Takes the completion observation (ordered after the last accounting, since its basis is
 * allocated now) and records, as a typed fact, whether it establishes, contradicts or could not
 * read the bound postconditions.
 *
 * A read that shows another version or schematic than the hop's is taken again, each time with a
 * fresh basis, while the verify transport window lasts: a read answered from an earlier answer (a
 * lagging apid proxy or cache, issue 16) shows the version from before the reboot, and failing the
 * node on it would call a machine that did what was asked failed. An earlier answer can never show
 * the target; a contradiction still read at the end of the window is the node's.
 */
export async function completionObservation(
  s: StepState,
  hop: TalosHop,
  healthVerdict: Verdict,
): Promise<
  {
    id: string;
    reading: PostconditionReading;
    /** What the target's own reads established, health aside. */
    own: PostconditionReading;
    summary: string;
  }
> {
  const { journal, clock, owner } = s.deps;
  const actor = controllerActor(owner);
  const transportMs = s.bound.plan.spec.phases.deadlines.verify.transportSeconds * 1000;
  const { basis, reading: read } = await completionRead(s, {
    windowMs: transportMs,
    read: () => readBoot(s, transportMs),
    readAgain: (r) => postconditionReading(r, hop, "pass") === "contradicted",
  });
  const node = read.node;
  const text = postconditionText(
    s.bound.plan.metadata.cluster,
    s.node,
    read.version ?? "unreadable",
    read.schematic ?? "unreadable",
    healthVerdict,
  );
  const digest = await digestOf(text);
  const reading = postconditionReading(read, hop, healthVerdict);
  const summary =
    `version=${read.version ?? "unreadable"} schematic=${read.schematic ?? "unreadable"} ` +
    `ready=${read.ready} health=${healthVerdict} postconditions=${reading}`;
  const rec = await journal.recordObservation({
    machine: s.node,
    purpose: "completion",
    planDigest: s.bound.digest,
    operationId: s.operationId,
    basis,
    digest,
    objectUid: node?.uid ?? "",
    resourceVersion: node?.resourceVersion ?? "",
    observedGeneration: 0,
    observedAtMs: clock.now(),
    summary,
    postcondition: reading,
    actor,
  });
  return { id: rec.id, reading, own: postconditionReading(read, hop, "pass"), summary };
}
