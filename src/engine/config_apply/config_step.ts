/**
 * One node of a ConfigApply (docs/config-apply.md): checks on what the node runs now (its Talos
 * minor against the mode, its active and persistent configuration, the class of the whole
 * effective diff against the plan), the gate, the dispatch check, the commitment, then the apply
 * and — for a change that needs explicit activation — cordon, drain and the reboot, each through
 * the one mutation path with its own intent, attempt and observed postcondition; then every
 * changed setting's activation is read back from the running node until the verification
 * deadline, the node's own cordon lifted once it is observed back (`out_of_service.ts`), and the
 * completion observation says which settings are active and which are stored but not yet.
 */
import { stringify } from "yaml";
import { type Classification, talosMode } from "../../domain/config_apply/classify.ts";
import { type ConfigValue, sameValue } from "../../domain/config_apply/config_diff.ts";
import type { ConfigApplyPlan, PlanNode } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import { type Assessed, assessNode } from "./assess.ts";
import { cordonAndDrain, verifyThenUncordon } from "./out_of_service.ts";
import type { CordonFact } from "../cordon_ownership.ts";
import type { ExecutorDeps, StepState } from "../executor/deps.ts";
import { digestOf, stepKey } from "../executor/digests.ts";
import { checkThenCommit } from "../executor/commit_step.ts";
import { gateBefore } from "../executor/gate_wait.ts";
import { underNoiseLease } from "../executor/step_lease.ts";
import { postHooksBeforeVerifying, startHooks } from "../executor/step_hooks.ts";
import { errorText, mutate, talosSent } from "../executor/mutation.ts";
import { controllerActor } from "../executor/observe.ts";
import { completionRead } from "../executor/completion_read.ts";
import { postGateWithin } from "../executor/verify_phase.ts";
import {
  healthText,
  unestablishedReason,
  verdictForTarget,
  withPostGate,
} from "../executor/health_elsewhere.ts";
import {
  haltUnresolved,
  type NodeOutcome,
  notCommitted,
  outcome,
  settledAtResponse,
  stoppedMidStep,
  transition,
} from "../executor/step_outcome.ts";
import {
  activationReading,
  type ConfigRead,
  readActivation,
  readMachineConfig,
  type SettingActivation,
} from "./readback.ts";

/** A bound ConfigApply and the patch it sends, as read and digest-checked at dispatch. */
export interface ConfigBound {
  readonly plan: ConfigApplyPlan;
  readonly digest: string;
  /** The patch as a parsed mapping. */
  readonly patch: ConfigValue;
}

/** A node step's outcome with the activation of every changed setting, when it was read. */
export interface ConfigNodeOutcome extends NodeOutcome {
  readonly classification?: Classification;
  readonly settings?: readonly SettingActivation[];
}

/** The postcondition a completed step binds: the patch stored and every setting observed active. */
export function configPostText(cluster: string, node: string, patchSha: string, reading: string) {
  return `config:${cluster}/${node}#${patchSha}|activation=${reading}`;
}

type Step = StepState<ConfigApplyPlan>;

/**
 * The node read and judged before any write (`assess.ts`): a refusal or hold creates no operation.
 */
async function prepare(
  deps: ExecutorDeps,
  bound: ConfigBound,
  node: PlanNode,
): Promise<{ ok: true; value: Assessed } | { ok: false; outcome: ConfigNodeOutcome }> {
  const timeoutMs = deps.callTimeoutMs(
    bound.plan.spec.phases.deadlines.apply.transportSeconds * 1000,
  );
  const a = await assessNode(deps.talos, bound.plan, bound.patch, node, timeoutMs);
  if (a.ok) return { ok: true, value: a };
  return {
    ok: false,
    outcome: {
      ...notCommitted(node.name, a.reason, a.detail, a.refused),
      ...(a.classification ? { classification: a.classification } : {}),
    },
  };
}

/** Runs one node of a ConfigApply. */
export async function runConfigNode(
  deps: ExecutorDeps,
  bound: ConfigBound,
  node: PlanNode,
): Promise<ConfigNodeOutcome> {
  const early = await prepare(deps, bound, node);
  if (!early.ok) return early.outcome;
  const boundPlan = { plan: bound.plan, digest: bound.digest };
  // The gate holds within the apply's verification window, as every kind's does.
  const held = await gateBefore(
    deps,
    boundPlan,
    node.name,
    bound.plan.spec.phases.deadlines.apply.verificationSeconds * 1000,
  );
  if (held) return held;
  // Judged again once the gate passed: the whole document is sent, so it is built from the
  // configuration as it is now, never from a read the gate's wait (minutes) made old — a change
  // made on the node meanwhile would be overwritten unseen.
  const prepared = await prepare(deps, bound, node);
  if (!prepared.ok) return prepared.outcome;
  const { target, classification } = prepared.value;
  const committed = await checkThenCommit(deps, boundPlan, node, stepKey(node.name));
  if (!committed.ok) return committed.outcome;
  // The step's expected-noise silences (a reboot's CephOSDDown) live exactly as long as it does.
  return await underNoiseLease(committed.state, async (s) => {
    try {
      // Pre hooks first, before anything is sent to the node; one that does not succeed holds it.
      const hook = await startHooks(s);
      if (hook) return { ...await haltUnresolved(s, hook.reason, hook.detail), classification };
      return { ...await applyAndActivate(s, bound, target, classification), classification };
    } catch (e) {
      if (deps.signal?.aborted) {
        return { ...await stoppedMidStep(s, deps.signal.reason), classification };
      }
      return { ...await haltUnresolved(s, "ExecutorError", errorText(e)), classification };
    }
  });
}

async function applyAndActivate(
  s: Step,
  bound: ConfigBound,
  target: ConfigValue,
  classification: Classification,
): Promise<ConfigNodeOutcome> {
  const spec = bound.plan.spec;
  const deadline = spec.phases.deadlines.apply;
  const transportMs = deadline.transportSeconds * 1000;
  const timeoutMs = s.deps.callTimeoutMs(transportMs);
  const data = new TextEncoder().encode(stringify(target));
  const explicit = classification.overall === "explicitActivation";
  // The boot identity before anything is sent: a boot is proved only by a change of it.
  let bootBefore: string | undefined;
  if (explicit) {
    try {
      bootBefore = await s.deps.talos.bootId(s.address, { timeoutMs });
    } catch (e) {
      return await haltUnresolved(s, "BootIdUnreadable", errorText(e));
    }
  }
  const applied = await mutate(s, {
    phase: "config-apply",
    request: {
      rpc: "MachineService.ApplyConfiguration",
      node: s.node,
      address: s.address,
      mode: talosMode(spec.mode),
      dryRun: false,
      configSha256: await digestOf(new TextDecoder().decode(data)),
      patch: spec.config.sha256,
      activation: classification.overall,
    },
    route: `apid:node=${s.address}`,
    deadline,
    send: async (ms) =>
      talosSent(
        await s.deps.talos.applyConfiguration(s.address, {
          data,
          mode: talosMode(spec.mode),
          dryRun: false,
        }, { timeoutMs: ms }),
      ),
  });
  if (applied.kind === "refused") return await haltUnresolved(s, applied.reason, applied.detail);
  if (applied.sent.responseClass !== "accepted") {
    return await notAccepted(s, "config-apply", applied.sent.responseClass, applied.sent.detail);
  }
  // The apply's own postcondition: the persistent document holds what was sent.
  const stored = await readStored(s, target, timeoutMs, deadline.verificationSeconds * 1000);
  const storedHolds = stored.ok ? sameValue(stored.doc, target) : undefined;
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: "config-apply",
    kind: "fact",
    detail: {
      persistentHoldsSent: storedHolds ?? "unreadable",
      persistentVersion: stored.ok ? stored.version : null,
      mode: talosMode(spec.mode),
    },
    nowMs: s.deps.clock.now(),
  });
  let booted = false;
  let cordon: CordonFact | undefined;
  if (explicit && storedHolds) {
    // The node leaves service before its reboot: cordoned (provenance recorded) and drained
    // through the Eviction API. A halt here keeps the cordon; nothing is rebooted.
    const out = await cordonAndDrain(s);
    if (!out.ok) return await haltUnresolved(s, out.halt.reason, out.halt.detail);
    cordon = out.value;
    // The explicit activation: a reboot of its own, after the store was observed.
    const rebooted = await mutate(s, {
      phase: "reboot",
      request: {
        rpc: "MachineService.Reboot",
        node: s.node,
        address: s.address,
        mode: "DEFAULT",
        activates: "config",
      },
      route: `apid:node=${s.address}`,
      deadline,
      send: async (ms) =>
        talosSent(await s.deps.talos.reboot(s.address, "DEFAULT", { timeoutMs: ms })),
    });
    if (rebooted.kind === "refused") {
      return await haltUnresolved(s, rebooted.reason, rebooted.detail);
    }
    if (rebooted.sent.responseClass !== "accepted") {
      return await notAccepted(s, "reboot", rebooted.sent.responseClass, rebooted.sent.detail);
    }
    booted = await awaitNewBoot(s, bootBefore!, deadline.verificationSeconds * 1000);
    if (!booted) {
      // No new boot by the deadline is a timeout, not a contradiction: the accepted reboot may
      // still come (a shutdown hanging on a service), so the operation stays unresolved with its
      // scope held and the cordon in place — never failed from settings read on the old boot.
      return await haltUnresolved(
        s,
        "BootNotObserved",
        `reboot accepted; no new boot observed within ${deadline.verificationSeconds}s; ` +
          `the node stays cordoned`,
      );
    }
  }
  return await settle(s, bound, classification, target, storedHolds, booted, "ConfigNotActive", {
    cordon,
  });
}

/**
 * Reads the persistent document after an accepted apply. One that does not hold what was sent is
 * read again each poll until it does or the window passes: a read answered from an earlier answer
 * (a lagging apid proxy or cache, issue 16) shows the document from before the apply, and an
 * earlier answer can never show what was just sent, so a document holding it once is stored; one
 * still not holding it at the end of the window is `ConfigNotStored`.
 */
async function readStored(
  s: Step,
  target: ConfigValue,
  timeoutMs: number,
  windowMs: number,
): Promise<ConfigRead> {
  const until = s.deps.clock.now() + windowMs;
  let stored = await readMachineConfig(s.deps.talos, s.address, "persistent", timeoutMs);
  while (stored.ok && !sameValue(stored.doc, target) && s.deps.clock.now() < until) {
    await s.deps.clock.sleep(s.deps.pollIntervalMs, s.deps.signal);
    stored = await readMachineConfig(s.deps.talos, s.address, "persistent", timeoutMs);
  }
  return stored;
}

/** Polls the boot ID until it changed and the node is back, or the window passes. */
async function awaitNewBoot(s: Step, before: string, windowMs: number): Promise<boolean> {
  const deadline = s.deps.clock.now() + windowMs;
  const timeoutMs = s.deps.callTimeoutMs(
    s.bound.plan.spec.phases.deadlines.apply.transportSeconds * 1000,
  );
  while (s.deps.clock.now() < deadline) {
    await s.deps.clock.sleep(s.deps.pollIntervalMs, s.deps.signal);
    try {
      const now = await s.deps.talos.bootId(s.address, { timeoutMs });
      if (now !== before) {
        await s.deps.journal.recordPhase({
          operationId: s.operationId,
          token: s.token,
          phase: "boot-observed",
          kind: "fact",
          detail: { bootIdChanged: true },
          nowMs: s.deps.clock.now(),
        });
        return true;
      }
    } catch {
      // Down or still booting: unreadable this time, read again until the window passes.
    }
  }
  return false;
}

/**
 * Reads every setting's activation until all are active or the verification window passes, then
 * records the completion observation and asks the journal for the state it supports.
 */
async function settle(
  s: Step,
  bound: ConfigBound,
  classification: Classification,
  target: ConfigValue,
  storedHolds: boolean | undefined,
  booted: boolean,
  notActiveReason: Reason,
  after: { readonly cordon?: CordonFact | undefined } = {},
): Promise<ConfigNodeOutcome> {
  const spec = bound.plan.spec;
  const deadline = s.deps.clock.now() + spec.phases.deadlines.apply.verificationSeconds * 1000;
  const timeoutMs = s.deps.callTimeoutMs(spec.phases.deadlines.apply.transportSeconds * 1000);
  const read = () =>
    readActivation({
      talos: s.deps.talos,
      address: s.address,
      timeoutMs,
      classification,
      target,
      bootedAfterStore: booted,
    });
  // Talos's controllers act on a stored configuration asynchronously: a read in the same instant
  // as the apply would only see the old state, so the first read waits one poll interval.
  await s.deps.clock.sleep(s.deps.pollIntervalMs, s.deps.signal);
  let settings = await read();
  while (
    activationReading(storedHolds, settings) !== "established" && s.deps.clock.now() < deadline
  ) {
    await s.deps.clock.sleep(s.deps.pollIntervalMs, s.deps.signal);
    settings = await read();
  }
  if (after.cordon) {
    // The node is back: once a node round passes, cairn lifts its own cordon (only that one).
    const u = await verifyThenUncordon(s, after.cordon);
    if (!u.ok) return { ...await haltUnresolved(s, u.halt.reason, u.halt.detail), settings };
  }
  // The post hooks the step owes run before it verifies; one that does not succeed holds it.
  const owed = await postHooksBeforeVerifying(
    s,
    activationReading(storedHolds, settings) === "established",
  );
  if (owed) return { ...await haltUnresolved(s, owed.reason, owed.detail), settings };
  await transition(s, "verifying", "ConfigApplied", "every attempt accepted; reading activation");
  // Post-gate rounds until one passes or the apply's verification window ends: a node that was
  // drained and rebooted takes time to get its workloads back (as a TalosUpgrade's post-gate).
  const post = await postGateWithin(
    s,
    s.bound.plan.spec.phases.deadlines.apply.verificationSeconds * 1000,
  );
  // The completion read: its basis allocated first, then every setting read afresh (the readings
  // above may be minutes old by now; a setting reverted meanwhile is never reported active).
  const actor = controllerActor(s.deps.owner);
  const settled = activationReading(storedHolds, settings) === "established";
  // Settings observed active that this read shows not active are read again (a fresh basis each
  // time) within the window: a read answered from an earlier answer (a lagging apid proxy or
  // cache, issue 16) shows the document from before the activation. One never observed active is
  // judged on this read, as before; one still not active at the end of the window is not active.
  const completion = await completionRead(s, {
    windowMs: spec.phases.deadlines.apply.verificationSeconds * 1000,
    read: () => read(),
    readAgain: (fresh) => settled && activationReading(storedHolds, fresh) === "contradicted",
  });
  const basis = completion.basis;
  settings = completion.reading;
  const activation = activationReading(storedHolds, settings);
  const reading = withPostGate(activation, post);
  const summary = activationSummary(storedHolds, settings, healthText(post));
  const rec = await s.deps.journal.recordObservation({
    machine: s.node,
    purpose: "completion",
    planDigest: bound.digest,
    operationId: s.operationId,
    basis,
    digest: await digestOf(
      configPostText(bound.plan.metadata.cluster, s.node, spec.config.sha256, reading),
    ),
    objectUid: "",
    resourceVersion: "",
    observedGeneration: 0,
    observedAtMs: s.deps.clock.now(),
    summary,
    postcondition: reading,
    actor,
  });
  const out = (state: NodeOutcome["state"], reason: Reason) => ({
    ...outcome(s, state, reason, summary),
    settings,
  });
  if (reading === "established") {
    await transition(s, "completed", "CompletionObserved", summary, rec.id);
    return out("completed", "CompletionObserved");
  }
  if (reading === "contradicted") {
    const reason: Reason = storedHolds === false
      ? "ConfigNotStored"
      : verdictForTarget(post) === "fail"
      ? "VerificationHealthFailed"
      : notActiveReason;
    await transition(s, "failed", reason, summary, rec.id);
    return out("failed", reason);
  }
  const why = unestablishedReason(activation, post);
  await transition(s, "unresolved", why, summary);
  return out("unresolved", why);
}

/** `stored=yes active: a, b; not active: c; install-only: d`: paths and states, never values. */
export function activationSummary(
  storedHolds: boolean | undefined,
  settings: readonly SettingActivation[],
  health: string,
): string {
  const by = (st: SettingActivation["state"]) =>
    settings.filter((x) => x.state === st).map((x) => x.path);
  const part = (label: string, xs: string[]) => (xs.length ? `; ${label}: ${xs.join(", ")}` : "");
  return `stored=${storedHolds === undefined ? "unreadable" : storedHolds ? "yes" : "no"}` +
    part("observed active", by("active")) +
    part("stored, not yet active", by("not-active")) +
    part("stored, takes effect at install/upgrade", by("install-only")) +
    part("activation unreadable", by("unreadable")) + `; health=${health}`;
}

async function notAccepted(
  s: Step,
  phase: string,
  responseClass: string,
  detail: string,
): Promise<ConfigNodeOutcome> {
  const why = `${phase}: ${responseClass}: ${detail}`;
  if (responseClass === "rejected-pre-mutation") {
    // A validation refusal before any mutation settles the operation `rejected` as the journal
    // records it, when it was the only request to the machine (node hooks' Job creates beside it
    // are answered, not requests to the machine); its owed post hooks then go out as owed hooks.
    // After an accepted apply (a refused reboot) it stays unresolved below.
    const now = await s.deps.journal.getOperation(s.operationId);
    if (now?.state === "rejected") {
      return await settledAtResponse(s, now, "ConfigApplyRejected", why);
    }
  }
  const lost = responseClass === "lost" || responseClass === "transport-failure";
  return await haltUnresolved(
    s,
    phase === "reboot"
      ? (lost ? "RebootResponseLost" : "RebootRefused")
      : (lost ? "ConfigApplyResponseLost" : "ConfigApplyRefused"),
    why,
  );
}
