/**
 * One seed of the simulation campaign (issue 16): the seed draws a cluster, a plan and a fault
 * schedule; the real executor runs it, as one or more controllers, against the twin's models
 * behind in-process ports and a libSQL `:memory:` journal, on virtual time, in this process (no
 * sockets, no child processes, no wall clock). The invariants (`invariants.ts`) are checked
 * after every step; the run stops at the first violation. The same seed (and schedule) replays
 * the same run.
 */
import type { JournalBackup } from "../../adapters/journal/libsql_backup.ts";
import { MemoryJournalPool, openRestorableJournal } from "../../adapters/journal/libsql_journal.ts";
import { CairnError } from "../../domain/errors.ts";
import { parsePlan } from "../../domain/plan/parse.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import type { ExecutorDeps } from "../../engine/executor/deps.ts";
import type { RolloutOutcome } from "../../engine/executor/rollout.ts";
import type { IdSource } from "../../ports/clock.ts";
import type { Journal } from "../../ports/journal.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import type { Logger } from "../../ports/logger.ts";
import type { PlanFacts } from "../../ports/reconcile.ts";
import { executionModel } from "../../report/reconcile_reports.ts";
import { type InprocTwin, startInprocTwin } from "../../sim/inproc/cluster.ts";
import { counterIdSource, inprocExecutionTiming } from "../inproc_rollout.ts";
import {
  controllerClock,
  type ControllerContext,
  controllerJournal,
  controllerKube,
  controllerTalos,
  type Life,
} from "./controller_ports.ts";
import {
  InvariantChecker,
  InvariantViolated,
  type Violation,
  type WorldView,
} from "./invariants.ts";
import { Prng } from "./prng.ts";
import { drawSchedule, type DstEvent } from "./schedule.ts";
import { kindAt, kindNamed } from "./kinds.ts";
import { describeShape, drawShape, type Profile, type Shape } from "./world.ts";

/** A deliberately broken executor (the vacuity tests): rewires the executor's own ports. */
export type Variant = (deps: ExecutorDeps) => ExecutorDeps;

/**
 * A deliberately broken executor of any kind: rewires the cluster ports it is given (`checked`:
 * inside the checker's view, every request seen; `unseen`: the twin's own ports, a request the
 * checker learns of only from the world's state).
 */
export type PortsVariant = (
  checked: { kube: Kube; talos: Talos },
  unseen: { kube: Kube; talos: Talos },
) => { kube: Kube; talos: Talos };

export interface SeedOptions {
  readonly seed: number;
  /** Replaces the drawn schedule (shrinking, named scenarios). */
  readonly events?: readonly DstEvent[];
  readonly variant?: Variant;
  readonly portsVariant?: PortsVariant;
  /** Runs this plan kind instead of the drawn one (the seed's other draws do not move). */
  readonly kind?: string;
  /** The catalogue bytes plans bind (read once per campaign). */
  readonly catalogue: Uint8Array;
  /** Edits the drawn shape (named scenarios pin a cluster). */
  readonly shape?: (s: Shape) => Shape;
  /** How big the drawn world may be (default `full`). */
  readonly profile?: Profile;
  /** Cuts the drawn plan to its first nodes (named scenarios). */
  readonly maxPlanNodes?: number;
  /**
   * A deliberately broken executor's journal acts (the vacuity tests of the ComponentUpgrade
   * invariants): wraps the journal the executor is given, inside the checker's view.
   */
  readonly journalVariant?: (j: Journal) => Journal;
  /** Reads the journal and the twin at the end, before they close (scenario assertions). */
  readonly inspect?: (journal: Journal, twin: InprocTwin) => Promise<void>;
  /**
   * Where the seed's in-memory journal comes from: by default a process-wide pool that gives a
   * closed journal's database back out as a new journal (`MemoryJournalPool`); `"fresh"` opens
   * a new database (the test that holds both to the same results).
   */
  readonly journals?: MemoryJournalPool | "fresh";
}

/** The seeds' journals, reused within the process (a new one when every pooled one is in use). */
const JOURNALS = new MemoryJournalPool();

export interface SeedResult {
  readonly seed: number;
  readonly profile: Profile;
  /** The plan kind the seed ran. */
  readonly kind: string;
  readonly nodes: number;
  readonly planNodes: readonly string[];
  readonly events: readonly DstEvent[];
  readonly violation?: Violation;
  /** A harness or executor error that is not an invariant (a throw out of the run). */
  readonly error?: string;
  /** Each plan node's final state in the journal (`pending`: no operation). */
  readonly states: Readonly<Record<string, string>>;
  /** The last controller's rollout end, and why its first node that did not complete stopped. */
  readonly end?: string;
  readonly reason?: string;
  readonly virtualMs: number;
  /** Journal write points passed (crash points available). */
  readonly writePoints: number;
  /** Their names in order (`attempt:after-commit`, …): scenarios aim crashes with them. */
  readonly pointNames: readonly string[];
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** Thrown at a write point inside a transaction: the transaction rolls back, as on a kill. */
class Crash extends Error {}

function worldView(twin: InprocTwin): WorldView {
  const nodesType = twin.store.findType("", "v1", "nodes")!;
  const machine = (n: string) => twin.cluster.nodes.get(n)!;
  return {
    now: () => twin.sim.now(),
    unschedulable: (n) =>
      (twin.store.get(nodesType, undefined, n)?.["spec"] as { unschedulable?: boolean } | undefined)
        ?.unschedulable === true,
    stage: (n) => machine(n).stage,
    bootId: (n) => machine(n).bootId,
    installsSinceBoot: (n) => machine(n).installsSinceBoot,
    componentsMoving: (n) =>
      [...machine(n).k8s?.pods.values() ?? []]
        .filter((p) => !p.ready && p.configVersion > 1)
        .map((p) => p.component),
    persistentChanged: (n) => machine(n).machineConfig.persistentVersion > 1,
    kubeProxyUnavailable: () => kubeProxyUnavailable(twin),
  };
}

/** Nodes without an available kube-proxy pod (none, terminating, or not ready): invariant 10. */
function kubeProxyUnavailable(twin: InprocTwin): string[] {
  const dsType = twin.store.findType("apps", "v1", "daemonsets");
  const ds = dsType && twin.store.get(dsType, "kube-system", "kube-proxy");
  if (!ds) return [];
  const available = new Set<string>();
  for (const p of twin.store.list(twin.controllers.pods, "kube-system")) {
    const owned = (p.metadata.ownerReferences ?? []).some((o) =>
      o.controller === true && o.uid === ds.metadata.uid
    );
    const status = p.status as { conditions?: Array<{ type: string; status: string }> } | undefined;
    const ready = (status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
    const node = (p.spec as { nodeName?: string } | undefined)?.nodeName;
    if (owned && ready && !p.metadata.deletionTimestamp && node) available.add(node);
  }
  const nodesType = twin.store.findType("", "v1", "nodes")!;
  return twin.store.list(nodesType).map((n) => n.metadata.name).filter((n) => !available.has(n));
}

/** Runs one seed to its end (or its first violation). */
export async function runSeed(o: SeedOptions): Promise<SeedResult> {
  const prng = new Prng(o.seed);
  const profile = o.profile ?? "full";
  const drawn = drawShape(prng, profile);
  const shape = o.shape ? o.shape(drawn) : drawn;
  const description = describeShape(shape, prng.fork());
  // One draw whichever kind runs: a pinned kind leaves the seed's other draws where they were.
  const drawnKind = kindAt(prng.float());
  const driver = o.kind ? kindNamed(o.kind) : drawnKind;
  const plan = await driver.draw(prng.fork(), shape, o.catalogue, {
    profile,
    ...(o.maxPlanNodes ? { maxNodes: o.maxPlanNodes } : {}),
  });
  plan.editDescription?.(description);
  const scheduleRng = prng.fork();
  const runRng = prng.fork();
  const twin = startInprocTwin({ description, seed: o.seed });
  const startMs = twin.sim.now();
  const pods = (await twin.kube.listPods()).items;
  const podsByNode = new Map<string, string[]>();
  for (const p of pods) {
    if (!p.nodeName || p.daemonSet) continue;
    podsByNode.set(p.nodeName, [...(podsByNode.get(p.nodeName) ?? []), p.name]);
  }
  const events = o.events ?? drawSchedule(scheduleRng, {
    planNodes: plan.aim ?? plan.nodes,
    clusterNodes: description.spec.nodes.map((n) => n.name),
    podsByNode,
    ...(plan.start ? { flux: true, writePoints: 40 } : {}),
  });
  const started = plan.start?.(twin, events);

  // ---- the journal, its write points and the controller-side events ------------------------
  let points = 0;
  const pointNames: string[] = [];
  const fired = new Set<DstEvent>();
  const controllers: Array<{ owner: string; life: Life; kill: () => void }> = [];
  const tasks = new Set<Promise<unknown>>();
  const state: { violation?: Violation; error?: string } = {};
  const outcomes: Array<{ owner: string; outcome: RolloutOutcome & { reason?: string } }> = [];
  const fenced: string[] = [];
  // The backup a restore event restores: taken at its write point (or right after the bind).
  let backup: { point: number; taken: Promise<JournalBackup> } | undefined;
  let bindDone = false;
  const restoreEvent = events.find((e) => e.kind === "restore");
  const byPointEvent = (n: number, name: string) =>
    events.find((e) =>
      !fired.has(e) &&
      ((e.kind === "crash" || e.kind === "replica") && e.atPoint === n ||
        // A pause waits for a point after a commit: inside a transaction it would stall the
        // journal's queue for every replica, which is not what a paused process does.
        e.kind === "pause" && n >= e.atPoint && name.endsWith(":after-commit") ||
        // A restore needs its backup taken at an earlier write point.
        e.kind === "restore" && backup !== undefined && n >= e.atPoint && n > backup.point)
    );
  const alive = () => controllers.filter((c) => !c.life.dead);
  const stopAll = () => {
    for (const c of controllers) c.kill();
  };
  const onViolation = (e: unknown) => {
    if (e instanceof InvariantViolated) state.violation ??= e.violation;
    else state.error ??= e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
    stopAll();
  };

  const journals = o.journals ?? JOURNALS;
  const open = journals === "fresh"
    ? (a: { ids: IdSource; nowMs: number; writePoint: (name: string) => Promise<void> }) =>
      openRestorableJournal({ url: ":memory:", ...a })
    : journals.open.bind(journals);
  const restorable = await open({
    ids: counterIdSource(),
    nowMs: startMs,
    writePoint: (name) => {
      pointNames.push(name);
      const n = ++points;
      if (restoreEvent && !backup && bindDone && n >= (restoreEvent.backupAt ?? 0)) {
        // Not awaited: this write point sits inside a transaction; the backup waits for it.
        backup = { point: n, taken: restorable.backup() };
      }
      const e = byPointEvent(n, name);
      if (!e || state.violation) return Promise.resolve();
      fired.add(e);
      if (e.kind === "pause") return twin.clock.sleep(e.forMs);
      if (e.kind === "crash") {
        const live = alive();
        if (live.length !== 1) return Promise.resolve();
        live[0]!.kill();
        track(restartAfter(e.restartAfterMs, e.skewMs));
        // Inside a transaction the kill rolls it back; after the commit the commit stands.
        return name.endsWith(":after-commit") ? Promise.resolve() : Promise.reject(new Crash(name));
      }
      if (e.kind === "replica") {
        launch(e.skewMs);
        return Promise.resolve();
      }
      // A restore: not awaited here (this write point may sit inside a transaction).
      track(restoreJournal(backup!));
      return Promise.resolve();
    },
  });
  const journal: Journal = restorable.journal;
  const parsed = await parsePlan(new TextEncoder().encode(plan.text), { file: "dst/plan.yaml" });
  const bound = await driver.bind(journal, {
    parsed,
    bytes: new TextEncoder().encode(plan.text),
    nowMs: startMs,
  });
  bindDone = true;
  // A backup drawn before the bind ends is the journal right after it.
  if (restoreEvent && (restoreEvent.backupAt ?? 0) <= points) {
    backup = { point: points, taken: restorable.backup() };
    await backup.taken;
  }
  const checker = new InvariantChecker(worldView(twin), {
    epoch: (await journal.installation()).epoch,
    planNodes: plan.nodes,
    kind: driver.kind,
    untrue: (machine, step) => driver.untrue(twin, { machine, step }),
    ...(driver.taken ? { taken: (machine, step) => driver.taken!(twin, { machine, step }) } : {}),
    ...(started?.component ? { component: started.component } : {}),
  });
  const addressToNode = new Map(description.spec.nodes.map((n) => [n.address, n.name]));
  const podsType = twin.store.findType("", "v1", "pods")!;

  // kube-proxy's DaemonSet rollout is the twin's own work between cairn's steps: invariant 10 is
  // checked at every change of one of its pods.
  twin.store.watch(podsType, (e) => {
    const o = e.object;
    if (o.metadata.namespace !== "kube-system" || !o.metadata.name.startsWith("kube-proxy")) return;
    if (!state.violation) step(() => checker.checkKubeProxy());
  });

  // ---- twin faults and world events --------------------------------------------------------
  for (const e of events) if (e.kind === "twin" && !e.afterCommitOf) twin.faults.arm(e.fault);
  const operatorCordon = (node: string) => {
    const view = worldView(twin);
    if (view.unschedulable(node)) return;
    void twin.kube.getNode(node).then(async (n) => {
      if (!n || view.unschedulable(node)) return;
      const r = await twin.kube.cordon(node, n.resourceVersion).catch(() => undefined);
      if (r?.kind === "applied") checker.operatorCordoned(node);
    });
  };
  for (const e of events) {
    if (e.kind === "operator-cordon" && !e.afterCommitOf && !e.onVerifyingOf) {
      twin.sim.schedule(e.atMs, () => operatorCordon(e.node));
    }
  }

  function track(p: Promise<unknown>) {
    const t = p.catch(onViolation).finally(() => tasks.delete(t));
    tasks.add(t);
  }

  async function restartAfter(ms: number, skewMs: number) {
    if (ms > 0) await twin.clock.sleep(ms);
    if (!state.violation) launch(skewMs);
  }

  /**
   * The journal restore (docs/recovery.md, operation model §2.15): the journal's contents are
   * replaced with the backup, and right behind it in the journal's queue (no other writer in
   * between) a recovery admin enters recovery mode: a new epoch, every live operation of the
   * restored journal taken over into it, every scope it knows pre-restore unaccounted. The admin
   * then releases, one by one, each plan node's scope that no live operation holds (a held one
   * waits for `cairn recover`'s accounting, outside the seed), and leaves recovery mode only when
   * none is left. The controller that ran before keeps running on its old token.
   */
  async function restoreJournal(b: { point: number; taken: Promise<JournalBackup> }) {
    const rows = await b.taken;
    if (state.violation) return;
    const admin = { identity: "dst-admin", role: "recovery-admin" as const };
    const replaced = restorable.restore(rows);
    const entered = journal.enterRecoveryMode(
      admin,
      `journal restored from the backup taken after write point ${b.point}`,
      twin.sim.now(),
    );
    await replaced;
    step(() => checker.restored(alive().map((c) => c.owner)));
    const epoch = await entered;
    checker.epoch = epoch;
    const ops = await journal.listOperations();
    for (const op of ops) step(() => checker.moved(op));
    for (const node of new Set([...plan.nodes, ...ops.map((op) => op.machine)])) {
      await journal.releaseRecoveryScope(node, admin, twin.sim.now()).catch(() => undefined);
    }
    await journal.exitRecoveryMode(admin, twin.sim.now()).catch(() => undefined);
    // The controller that ran before the restore keeps its old token; a successor follows it.
    await Promise.all(entries.filter((e) => !e.life.dead).map((e) => e.done));
    if (!state.violation) launch(0);
  }

  function step(fn: () => void) {
    try {
      fn();
    } catch (e) {
      onViolation(e);
    }
  }

  const timing = inprocExecutionTiming(twin);
  const entries: Array<{ owner: string; life: Life; done: Promise<unknown> }> = [];
  function launch(skewMs: number) {
    const owner = `ctl_${String.fromCharCode(97 + controllers.length)}`;
    const life: Life = { dead: false, onViolation };
    const ctx: ControllerContext = {
      owner,
      life,
      skewMs,
      checker,
      events,
      startMs,
      prng: runRng.fork(),
      podNode: (ref) =>
        (twin.store.get(podsType, ref.namespace, ref.name)?.["spec"] as
          | { nodeName?: string }
          | undefined)
          ?.nodeName ?? "?",
      onCommitted: (node) => {
        for (const e of events) {
          if (e.kind === "twin" && e.afterCommitOf === node && !fired.has(e)) {
            fired.add(e);
            twin.faults.arm(e.fault);
          }
          if (e.kind === "operator-cordon" && e.afterCommitOf === node && !fired.has(e)) {
            fired.add(e);
            operatorCordon(e.node);
          }
        }
      },
      onVerifying: (node) => {
        for (const e of events) {
          if (e.kind === "operator-cordon" && e.onVerifyingOf === node && !fired.has(e)) {
            fired.add(e);
            operatorCordon(e.node);
          }
        }
      },
    };
    const clock = controllerClock(ctx, timing.clock);
    const now = () => twin.sim.now();
    const ports = {
      kube: controllerKube(ctx, twin.kube, now),
      talos: controllerTalos(ctx, twin.talos, now, (a) => addressToNode.get(a) ?? a),
    };
    const seen = controllerJournal(ctx, journal);
    const run = bound.execute({
      journal: o.journalVariant ? o.journalVariant(seen) : seen,
      cluster: o.portsVariant
        ? o.portsVariant(ports, { kube: twin.kube, talos: twin.talos })
        : ports,
      authority: {
        bytes: new TextEncoder().encode(plan.text),
        signatures: "",
        requiredApprovals: 1,
        files: plan.files,
        installers: twin.registry.resolver,
      },
      clock,
      timeoutClock: controllerClock(ctx, timing.timeoutClock),
      callTimeoutMs: timing.callTimeoutMs,
      pollIntervalMs: timing.pollIntervalMs,
      roundIntervalMs: timing.roundIntervalMs,
      log: silent,
      owner,
      ...(o.variant ? { variant: o.variant } : {}),
    }).then((outcome) => {
      if (!life.dead) outcomes.push({ owner, outcome });
    }, (e) => {
      if (life.dead || e instanceof Crash) return;
      // A controller whose token the journal fenced (taken over, or an epoch change) stops with
      // the journal's refusal: the fence working, not a failure. It claims nothing.
      if (
        e instanceof CairnError && (e.reason === "OwnerFenced" || e.reason === "EpochSuperseded")
      ) {
        fenced.push(owner);
        return;
      }
      onViolation(e);
    });
    // A dead controller's run never settles: its entry is done when it dies or ends.
    let died = () => {};
    const done = new Promise<void>((resolve) => {
      void run.then(() => resolve());
      died = resolve;
    });
    controllers.push({ owner, life, kill: () => ((life.dead = true), died()) });
    entries.push({ owner, life, done });
    track(done);
  }
  launch(0);
  while (tasks.size > 0) await Promise.race(tasks);

  // ---- the end: the journal's states, and what the executor and the report claim ----------
  const ops = (await journal.listOperations()).filter((op) => op.planDigest === bound.digest);
  const states: Record<string, string> = {};
  for (const n of plan.nodes) {
    states[n] = ops.filter((op) => op.machine === n).at(-1)?.state ?? "pending";
  }
  if (!state.violation && !state.error) {
    try {
      checker.checkWorld();
      const journalState = (n: string) => ops.filter((op) => op.machine === n).at(-1)?.state;
      for (const { owner, outcome } of outcomes) {
        // A controller the restore fenced claims what the journal held before it replaced the
        // rows (checked by 6 when each claim was recorded); the report, built from the restored
        // journal, is held below whatever ran.
        if (checker.ranBeforeRestore(owner)) continue;
        // An outcome names each step's operation (a KubernetesUpgrade has several per node):
        // its claim is held against that operation; one without an id, against the node's last.
        checker.checkClaims(
          outcome.nodes.map((n) => ({
            by: `${owner}'s outcome`,
            node: n.operationId ? `${n.node} (${n.operationId})` : n.node,
            state: n.state,
          })),
          (claimed) => {
            const id = /\((.+)\)$/.exec(claimed)?.[1];
            return id ? ops.find((op) => op.id === id)?.state : journalState(claimed);
          },
        );
        if (
          outcome.state === "completed" && plan.nodes.some((n) => journalState(n) !== "completed")
        ) {
          checker.unbackedClaim(
            `${owner}'s rollout says completed; the journal holds ${JSON.stringify(states)}`,
          );
        }
      }
      await checkReport(
        journal,
        parsed.plan,
        parsed.sha256,
        checker,
        journalState,
        plan.nodes,
      );
    } catch (e) {
      if (e instanceof InvariantViolated) state.violation = e.violation;
      else state.error = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
    }
  }
  const last = outcomes.at(-1);
  const result: SeedResult = {
    seed: o.seed,
    profile,
    kind: driver.kind,
    nodes: shape.nodes,
    planNodes: plan.nodes,
    events,
    ...(state.violation ? { violation: state.violation } : {}),
    ...(state.error ? { error: state.error } : {}),
    states,
    ...(last ? { end: last.outcome.state } : fenced.length ? { end: "fenced" } : {}),
    ...(last?.outcome.nodes.find((n) => n.state !== "completed")
      ? { reason: last.outcome.nodes.find((n) => n.state !== "completed")!.reason }
      : last?.outcome.reason
      ? { reason: last.outcome.reason }
      : {}),
    virtualMs: twin.sim.now() - startMs,
    writePoints: points,
    pointNames,
  };
  try {
    await o.inspect?.(journal, twin);
  } finally {
    twin.stop();
    await journal.close();
  }
  return result;
}

/** 9, on the report: the execution report built from the journal claims no more than it holds. */
async function checkReport(
  journal: Journal,
  plan: Plan,
  digest: string,
  checker: InvariantChecker,
  journalState: (n: string) => string | undefined,
  planNodes: readonly string[],
): Promise<void> {
  const facts: PlanFacts = {
    name: plan.metadata.name,
    path: "dst/plan.yaml",
    branch: "dst",
    commit: "dst",
    digest,
    plan,
    problems: [],
    requiredApprovals: 1,
    refusals: [],
  };
  const model = executionModel({
    facts,
    history: await journal.planHistory(digest),
    head: { hash: "dst", events: 0 },
    generatedAt: 0,
  });
  for (const n of model.nodes) {
    if (n.state === "completed" && journalState(n.node) !== "completed") {
      checker.unbackedClaim(
        `the report shows ${n.node} completed; the journal holds ${journalState(n.node)}`,
      );
    }
  }
  if (model.verdict === "completed" && planNodes.some((n) => journalState(n) !== "completed")) {
    checker.unbackedClaim(
      "the report's verdict is completed with a node not completed in the journal",
    );
  }
  // After a restore the journal may be behind the cluster: the report must say so.
  if (checker.restoredAny() && !model.reasons.some((r) => r.reason === "RecoveryEntered")) {
    checker.unbackedClaim("the report does not say the journal it was built from was restored");
  }
}
