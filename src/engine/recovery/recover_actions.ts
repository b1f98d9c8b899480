/**
 * What `cairn recover` does against the journal and the cluster: gathers the evidence of one
 * operation and records one authorised decision (account an attempt, lift an operation-owned
 * cordon, classify on a completion observation), through the ports only.
 * Nothing here sends an install or a reboot: resume is not rerun.
 */
import { CairnError } from "../../domain/errors.ts";
import type { OperationState } from "../../domain/operation.ts";
import type { Reason } from "../../domain/reasons.ts";
import { parsePlan } from "../../domain/plan/parse.ts";
import type { TalosUpgradePlan } from "../../domain/plan/schema.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Actor, Journal, OperationDetail, OwnerToken } from "../../ports/journal.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import {
  bootObservedOf,
  cordonFactOf,
  drainFactsOf,
  parsePhases,
  type PossibleDecision,
  possibleDecisions,
  type RecoveryFacts,
} from "./recovery.ts";
import { digestOf, identityText } from "../executor/digests.ts";
import {
  identityRecord,
  judgeIdentity,
  type MachineIdentity,
  parseIdentityRecord,
  SYSTEM_INFORMATION,
  uuidFromNode,
  uuidFromSystemInformation,
  type UuidReading,
} from "../../domain/machine_identity.ts";

/** Everything `cairn recover OP` knows about one operation. */
export interface RecoveryEvidence {
  readonly facts: RecoveryFacts;
  readonly detail: OperationDetail;
  readonly plan: TalosUpgradePlan;
  readonly planDigest: string;
  /**
   * The machine the commitment bound (its evidence's recorded identity); absent for operations
   * committed before the journal recorded identities.
   */
  readonly boundIdentity?: MachineIdentity;
}

function refuse(reason: Reason, message: string): never {
  throw new CairnError({ reason, message });
}

/** Reads the operation, its plan and the machine's reads from the journal. */
export async function gatherEvidence(
  journal: Journal,
  o: { readonly operationId: string; readonly settleFloorMs: number; readonly nowMs: number },
): Promise<RecoveryEvidence> {
  const detail = await journal.showOperation(o.operationId) ??
    refuse("OperationNotFound", `no operation ${o.operationId} in the journal`);
  const op = detail.operation;
  const record = await journal.getPlan(op.planDigest) ??
    refuse("OperationNotFound", `the plan ${op.planDigest} of ${op.id} is not in the journal`);
  const parsed = await parsePlan(new TextEncoder().encode(record.bytes), {
    file: `journal:${record.name}`,
  });
  if (parsed.plan.kind !== "TalosUpgrade") {
    refuse("RecoveryNotApplicable", `${parsed.plan.kind} operations are not recovered here`);
  }
  const history = await journal.planHistory(op.planDigest);
  const opHistory = history?.operations.find((o) => o.id === op.id);
  const ownerSinceMs = opHistory?.ownerSinceMs;
  // The commitment's evidence: the last evidence read of the machine before the operation existed.
  const commitEvidence = (opHistory?.observations ?? []).filter((x) =>
    x.purpose === "evidence" && x.operationId === null && x.observedAtMs <= op.createdAtMs
  ).at(-1);
  const boundIdentity = commitEvidence?.machineIdentity
    ? parseIdentityRecord(commitEvidence.machineIdentity)
    : undefined;
  const reads = (await journal.machineObservations(op.machine)).map((r) => r.observedAtMs);
  const plan = parsed.plan;
  return {
    detail,
    plan,
    planDigest: record.digest,
    ...(boundIdentity ? { boundIdentity } : {}),
    facts: {
      operation: op,
      ownerSinceMs: ownerSinceMs ?? op.createdAtMs,
      attempts: detail.attempts,
      phases: parsePhases(detail.phases),
      machineReadsMs: reads,
      planRecovery: plan.spec.recovery.map((r) => r.action),
      settleFloorMs: o.settleFloorMs,
      nowMs: o.nowMs,
    },
  };
}

/** The evidence as `cairn recover OP` prints it (`--output json` prints exactly this). */
export interface EvidenceView {
  readonly operation: Record<string, unknown>;
  readonly attempts: ReadonlyArray<Record<string, unknown>>;
  readonly phases: ReadonlyArray<Record<string, unknown>>;
  readonly facts: Record<string, unknown>;
  readonly decisions: readonly PossibleDecision[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function evidenceView(e: RecoveryEvidence): EvidenceView {
  const f = e.facts;
  const op = f.operation;
  return {
    operation: {
      id: op.id,
      state: op.state,
      machine: op.machine,
      step: op.step,
      plan: `${e.plan.metadata.name} (sha256:${e.planDigest})`,
      owner: op.owner,
      ownerGen: op.ownerGen,
      ownerEpoch: op.ownerEpoch,
      ownerSince: iso(f.ownerSinceMs),
      attemptsUsed: op.attemptsUsed,
    },
    attempts: f.attempts.map((a) => ({
      id: a.id,
      number: a.number,
      phase: a.phase,
      sentAt: iso(a.sentAtMs),
      transportDeadline: iso(a.transportDeadlineMs),
      verificationDeadline: iso(a.verificationDeadlineMs),
      responseClass: a.responseClass,
      accountedBy: a.accountedBy,
      unaccounted: a.accountedBy === null,
      owner: `gen ${a.ownerGen}@${a.ownerEpoch}`,
    })),
    phases: f.phases.map((p) => ({ ...p, at: iso(p.atMs) })),
    facts: {
      cordon: cordonFactOf(f.phases) ?? null,
      drain: drainFactsOf(f.phases) ?? null,
      bootObserved: bootObservedOf(f.phases) ?? null,
    },
    decisions: possibleDecisions(f),
  };
}

/** Takes the operation over for a recovery act; refuses if a concurrent takeover won. */
export async function takeOverFor(
  journal: Journal,
  op: { readonly id: string; readonly ownerGen: number },
  actor: Actor,
  nowMs: number,
): Promise<{ token: OwnerToken; state: OperationState }> {
  const { epoch } = await journal.installation();
  const r = await journal.takeOver({
    operationId: op.id,
    newOwner: `recover:${actor.identity}`,
    seenGen: op.ownerGen,
    epoch,
    actor,
    nowMs,
  });
  if (!r.ok) {
    refuse("RecoveryTakeoverLost", `another takeover of ${op.id} won (generation ${op.ownerGen})`);
  }
  const o = r.operation;
  return { token: { owner: o.owner, gen: o.ownerGen, epoch: o.ownerEpoch }, state: o.state };
}

/** The cluster a recovery act reads (and, for an uncordon, writes). */
export interface RecoveryCluster {
  readonly kube: Kube;
  /** Absent when no talosconfig was given (an uncordon needs only Kubernetes). */
  readonly talos?: Talos;
  readonly clock: Clock;
  readonly callTimeoutMs: (remainingMs: number) => number;
}

/**
 * A recovery observation: the node's resourceVersion at the start of the read, the Talos
 * version and SMBIOS UUID at the plan's address, then the resourceVersion again at the end;
 * recorded with purpose `recovery`. It carries the plan's identity digest only when the Node and
 * Talos at that address name one machine — the machine the commitment bound, when the journal
 * recorded it (a replaced machine is never classified on). A node that cannot be read is not a
 * successful read and records nothing.
 */
export async function recoveryObservation(
  journal: Journal,
  c: RecoveryCluster,
  o: { readonly e: RecoveryEvidence; readonly actor: Actor },
): Promise<{ id: string; summary: string; changed: boolean }> {
  const op = o.e.facts.operation;
  const basis = await journal.startObservation(op.machine, o.actor, c.clock.now());
  const start = await readNode(c, op.machine);
  const address = o.e.plan.spec.nodes.find((n) => n.name === op.machine)?.address ?? op.machine;
  const talos = needTalos(c);
  const opts = { timeoutMs: c.callTimeoutMs(30_000) };
  const version = await talos.version(address, opts)
    .then((v) => v.tag, (e) => `unreadable (${e instanceof Error ? e.message : String(e)})`);
  const talosUuid = await talos.resource(address, SYSTEM_INFORMATION, opts).then(
    (r) => uuidFromSystemInformation(r.yamlSpec),
    (e): UuidReading => ({ ok: false, error: e instanceof Error ? e.message : String(e) }),
  );
  const end = await readNode(c, op.machine);
  const role = end.controlPlane ? "controlplane" : "worker";
  const verdict = judgeIdentity({
    node: op.machine,
    address,
    kube: uuidFromNode(end.systemUUID),
    talos: talosUuid,
  }, o.e.boundIdentity);
  const digest = verdict.ok
    ? await digestOf(
      identityText(o.e.plan.metadata.cluster, { name: end.name, role, address }),
    )
    : `${verdict.reason}:${verdict.detail}`.slice(0, 200);
  const changed = start.resourceVersion !== end.resourceVersion;
  const summary = `talos=${version} ` +
    `${verdict.ok ? identityRecord(verdict.identity) : verdict.reason} bootId=${end.bootID} ` +
    `ready=${end.ready} ` +
    `unschedulable=${end.unschedulable} rv=${start.resourceVersion}→${end.resourceVersion}`;
  const rec = await journal.recordObservation({
    machine: op.machine,
    purpose: "recovery",
    planDigest: o.e.planDigest,
    operationId: op.id,
    basis,
    digest,
    objectUid: end.uid,
    resourceVersion: end.resourceVersion,
    resourceVersionAtStart: start.resourceVersion,
    observedGeneration: 0,
    observedAtMs: c.clock.now(),
    summary,
    actor: o.actor,
  });
  return { id: rec.id, summary, changed };
}

async function readNode(c: RecoveryCluster, name: string) {
  let node;
  try {
    node = await c.kube.getNode(name);
  } catch (e) {
    refuse("RecoveryObservationFailed", `node ${name} could not be read: ${String(e)}`);
  }
  return node ?? refuse("RecoveryObservationFailed", `node ${name} is not in the cluster`);
}

/** The Talos port, or a usage error when the command was given no talosconfig. */
export function needTalos(c: RecoveryCluster): Talos {
  if (!c.talos) {
    throw new CairnError({
      reason: "UsageInvalid",
      message: "a Talos connection (--talosconfig T) is required for this decision",
    });
  }
  return c.talos;
}
