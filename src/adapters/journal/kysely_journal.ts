/**
 * The Journal port over kysely, whatever database is under it (`store.ts`: libSQL in
 * `libsql_journal.ts`, PostgreSQL in `pg/pg_journal.ts`). Every act is one write transaction
 * that no other writer interleaves with; refusals are recorded afterwards in a transaction of
 * their own so that the refused transaction leaves nothing behind.
 */
import type { Kysely } from "kysely";
import type { CancelGround } from "../../domain/operation.ts";
import type { IdSource } from "../../ports/clock.ts";
import type {
  ClusterFreezeEntry,
  HookObligationEntry,
  NameBinding,
  ObservationEntry,
  PlanEntry,
  PlanHistory,
} from "../../ports/journal_history.ts";
import type {
  Actor,
  AttemptInput,
  ChainCheck,
  ClusterFreezeInput,
  CommitInput,
  DispatchCheckInput,
  EvidenceCheckInput,
  HealthRoundInput,
  HookClaimInput,
  HookClaimResult,
  HookDischargeInput,
  HookOwedInput,
  Journal,
  JournalEvent,
  ObservationInput,
  ObservationRecord,
  OperationDetail,
  OperationRecord,
  OwnerToken,
  PhaseInput,
  PlanRecord,
  PlanRecordInput,
  RecoveryAttemptInput,
  RecoveryDecisionInput,
  RecoveryResponseInput,
  ResponseInput,
  ResumeInput,
  RolloutEventInput,
  TakeoverInput,
  TransitionInput,
} from "../../ports/journal.ts";
import { classifyTx, recoveryDecisionTx, responseTx, transitionTx } from "./accounting.ts";
import { resumeTx } from "./resume.ts";
import { commitTx, recordRefusalTx } from "./commitment.ts";
import { recoveryAttemptTx, recoveryResponseTx } from "./recovery_attempt.ts";
import { assertCurrentEpoch, assertOwner, type Ctx, machineEvent } from "./context.ts";
import { appendEvent, checkChain, toEvent } from "./hash_chain.ts";
import { clusterFreezeTx, readClusterFreeze, rolloutEventTx } from "./beside.ts";
import { hookClaimTx, hookDischargeTx, hookOwedTx, obligationsOf } from "./hook_obligations.ts";
import {
  readFrozenMachines,
  readMachineObservations,
  readNameBindings,
  readPlanHistory,
  readPlans,
} from "./history.ts";
import { LATEST_SCHEMA } from "./migrations/mod.ts";
import {
  cancelTx,
  enterRecoveryTx,
  exitRecoveryTx,
  releaseScopeTx,
  takeoverTx,
} from "./ownership.ts";
import {
  actorText,
  fail,
  findOperation,
  loadOperation,
  loadPlan,
  toAttempt,
  tokenText,
  toObservation,
  toOperation,
  toPlan,
} from "./rows.ts";
import type { JournalDB } from "./schema.ts";
import type { JournalStore } from "./store.ts";
import { insertRow, insertRows, shape } from "./compiled.ts";

/**
 * Health results per INSERT (10 parameters a row, far below SQLite's variable limit and
 * PostgreSQL's 65535 parameters).
 */
const RESULT_ROWS_PER_INSERT = 200;

const INSTALLATION = shape([], (db) => db.selectFrom("installation").selectAll());
const INSERT_OBSERVATION = insertRow("observations", [
  "id",
  "machine",
  "purpose",
  "plan_digest",
  "operation_id",
  "basis",
  "revision",
  "digest",
  "object_uid",
  "resource_version",
  "resource_version_at_start",
  "observed_generation",
  "observed_at_ms",
  "summary",
  "postcondition",
  "machine_identity",
]);
const INSERT_PHASE = insertRow("phases", [
  "id",
  "operation_id",
  "phase",
  "kind",
  "at_ms",
  "detail",
  "revision",
]);
const INSERT_HEALTH_ROUND = insertRow("health_rounds", [
  "id",
  "cluster",
  "operation_id",
  "purpose",
  "started_at_ms",
  "finished_at_ms",
  "verdict",
]);

const INSERT_HEALTH_RESULTS = insertRows("health_results", [
  "round_id",
  "idx",
  "binding",
  "reader",
  "outcome",
  "reason",
  "object_uid",
  "object_ref",
  "resource_version",
  "observed_at_ms",
]);

/** The journal's acts over a `JournalStore`. */
export class KyselyJournal implements Journal {
  readonly #store: JournalStore;
  readonly #db: Kysely<JournalDB>;
  readonly #ids: IdSource;
  readonly #point: (name: string) => Promise<void>;

  constructor(
    store: JournalStore,
    a: { ids: IdSource; point: ((name: string) => Promise<void>) | undefined },
  ) {
    this.#store = store;
    this.#db = store.db;
    this.#ids = a.ids;
    this.#point = a.point ?? (() => Promise.resolve());
  }

  /** One write transaction with the installation row read inside it. */
  #tx<T>(fn: (ctx: Ctx) => Promise<T>): Promise<T> {
    return this.#store.write((tx, inst) => fn({ tx, inst, ids: this.#ids, point: this.#point }));
  }

  async installation() {
    const i = await INSTALLATION.firstOrThrow(this.#db, {});
    return { epoch: i.epoch, recoveryMode: i.recovery_mode === 1, schemaVersion: LATEST_SCHEMA };
  }

  async recordPlan(input: PlanRecordInput): Promise<PlanRecord> {
    const bound = await this.#tx(async (ctx) => {
      const b = await ctx.tx.selectFrom("plan_names").select("digest")
        .where("name", "=", input.name).executeTakeFirst();
      if (b && b.digest !== input.digest) return b.digest;
      if (!b) await this.#insertPlan(ctx, input);
      return null;
    });
    if (bound !== null) {
      await this.#tx((ctx) =>
        appendEvent(ctx.tx, {
          atMs: input.nowMs,
          kind: "plan-change-refused",
          epoch: ctx.inst.epoch,
          actor: "cairn",
          body: { name: input.name, bound, seen: input.digest, commit: input.firstSeenCommit },
        })
      );
      fail(
        "PlanChangedAfterApproval",
        `plan ${input.name} is bound to ${bound}, not ${input.digest}`,
        {
          name: input.name,
          bound,
          seen: input.digest,
        },
      );
    }
    return (await this.getPlan(input.digest))!;
  }

  async #insertPlan(ctx: Ctx, p: PlanRecordInput): Promise<void> {
    await ctx.tx.insertInto("plans").values({
      digest: p.digest,
      name: p.name,
      kind: p.kind,
      cluster: p.cluster,
      state: "proposed",
      approval_epoch: null,
      approved_at_ms: null,
      expires_at_ms: p.expiresAtMs,
      max_attempts: p.maxAttempts,
      max_evidence_age_ms: p.maxEvidenceAgeMs,
      first_seen_commit: p.firstSeenCommit,
      first_seen_at_ms: p.nowMs,
      bytes: p.bytes,
      signatures: p.signatures,
      steps_json: JSON.stringify(p.steps),
    }).execute();
    await ctx.tx.insertInto("plan_names").values({ name: p.name, digest: p.digest }).execute();
    await appendEvent(ctx.tx, {
      atMs: p.nowMs,
      kind: "plan",
      epoch: ctx.inst.epoch,
      actor: "cairn",
      body: { digest: p.digest, name: p.name, kind: p.kind, commit: p.firstSeenCommit },
    });
  }

  approvePlan(digest: string, actor: Actor, nowMs: number): Promise<void> {
    if (actor.role !== "approver") fail("RoleNotPermitted", "only an approver approves a plan");
    return this.#tx(async (ctx) => {
      const plan = await loadPlan(ctx.tx, digest) ?? fail("OperationNotFound", `no plan ${digest}`);
      if (plan.state !== "proposed" && plan.state !== "approved") {
        fail("TransitionIllegal", `plan ${digest} is ${plan.state}`);
      }
      await ctx.tx.updateTable("plans")
        .set({ state: "approved", approval_epoch: ctx.inst.epoch, approved_at_ms: nowMs })
        .where("digest", "=", digest).execute();
      await appendEvent(ctx.tx, {
        atMs: nowMs,
        kind: "approval",
        epoch: ctx.inst.epoch,
        actor: actorText(actor),
        body: { plan: digest },
      });
    });
  }

  endPlan(digest: string, to: "revoked" | "cancelled", actor: Actor, nowMs: number) {
    if (actor.role === "controller") fail("RoleNotPermitted", "automation cannot end a plan");
    return this.#tx(async (ctx) => {
      const plan = await loadPlan(ctx.tx, digest) ?? fail("OperationNotFound", `no plan ${digest}`);
      if (plan.state !== "proposed" && plan.state !== "approved") {
        fail("TransitionIllegal", `plan ${digest} is ${plan.state}`);
      }
      await ctx.tx.updateTable("plans").set({ state: to }).where("digest", "=", digest).execute();
      await appendEvent(ctx.tx, {
        atMs: nowMs,
        kind: to === "revoked" ? "revocation" : "cancellation",
        epoch: ctx.inst.epoch,
        actor: actorText(actor),
        body: { plan: digest },
      });
    });
  }

  async getPlan(digest: string): Promise<PlanRecord | undefined> {
    const r = await loadPlan(this.#db, digest);
    return r && toPlan(r);
  }

  recordHookOwed(input: HookOwedInput): Promise<void> {
    return this.#tx((ctx) => hookOwedTx(ctx, input));
  }

  claimOwedHook(input: HookClaimInput): Promise<HookClaimResult> {
    return this.#tx((ctx) => hookClaimTx(ctx, input));
  }

  recordHookDischarge(input: HookDischargeInput): Promise<void> {
    return this.#tx((ctx) => hookDischargeTx(ctx, input));
  }

  hookObligations(operationIds: readonly string[]): Promise<HookObligationEntry[]> {
    return this.#store.snapshot((tx) => obligationsOf(tx, operationIds));
  }

  recordRolloutEvent(input: RolloutEventInput): Promise<number> {
    return this.#tx((ctx) => rolloutEventTx(ctx, input));
  }

  setClusterFrozen(input: ClusterFreezeInput): Promise<void> {
    return this.#tx((ctx) => clusterFreezeTx(ctx, input));
  }

  clusterFreeze(cluster: string): Promise<ClusterFreezeEntry | undefined> {
    return readClusterFreeze(this.#db, cluster);
  }

  setFrozen(machine: string, frozen: boolean, actor: Actor, nowMs: number): Promise<void> {
    if (!frozen && actor.role !== "approver") {
      fail("RoleNotPermitted", "only an approver unfreezes");
    }
    if (actor.role === "controller") fail("RoleNotPermitted", "automation cannot freeze");
    return this.#tx(async (ctx) => {
      await machineEvent(ctx, {
        machine,
        kind: frozen ? "freeze" : "unfreeze",
        actor: actorText(actor),
        body: {},
        nowMs,
      });
      await ctx.tx.updateTable("machines").set({ frozen: frozen ? 1 : 0 })
        .where("machine", "=", machine).execute();
    });
  }

  startObservation(machine: string, actor: Actor, nowMs: number, epoch?: string): Promise<number> {
    return this.#tx((ctx) => {
      assertCurrentEpoch(ctx, epoch);
      return machineEvent(ctx, {
        machine,
        kind: "observation-started",
        actor: actorText(actor),
        body: {},
        nowMs,
      });
    });
  }

  recordObservation(input: ObservationInput): Promise<ObservationRecord> {
    if (input.postcondition !== undefined && input.purpose !== "completion") {
      throw new RangeError(`a ${input.purpose} observation records no postcondition reading`);
    }
    if (input.machineIdentity !== undefined && input.purpose !== "evidence") {
      throw new RangeError(`a ${input.purpose} observation records no machine identity`);
    }
    return this.#tx(async (ctx) => {
      assertCurrentEpoch(ctx, input.epoch);
      const id = this.#ids.newId("obs");
      const revision = await machineEvent(ctx, {
        machine: input.machine,
        kind: "observation",
        operationId: input.operationId ?? null,
        actor: actorText(input.actor),
        body: {
          id,
          purpose: input.purpose,
          digest: input.digest,
          rv: input.resourceVersion,
          ...(input.postcondition ? { postcondition: input.postcondition } : {}),
          ...(input.machineIdentity ? { identity: input.machineIdentity } : {}),
        },
        nowMs: input.observedAtMs,
      });
      const basis = input.basis ?? revision;
      if (basis > revision) throw new RangeError(`basis ${basis} was never allocated`);
      const row = {
        id,
        machine: input.machine,
        purpose: input.purpose,
        plan_digest: input.planDigest ?? null,
        operation_id: input.operationId ?? null,
        basis,
        revision,
        digest: input.digest,
        object_uid: input.objectUid,
        resource_version: input.resourceVersion,
        resource_version_at_start: input.resourceVersionAtStart ?? null,
        observed_generation: input.observedGeneration,
        observed_at_ms: input.observedAtMs,
        summary: input.summary,
        postcondition: input.postcondition ?? null,
        machine_identity: input.machineIdentity ?? null,
      };
      await INSERT_OBSERVATION.execute(ctx.tx, row);
      return toObservation(row);
    });
  }

  async commit(input: CommitInput) {
    const r = await this.#tx((ctx) => commitTx(ctx, input));
    if (r.ok) await this.#point("commit:after-commit");
    else {
      const actor = tokenText({ owner: input.owner, gen: 0, epoch: input.epoch });
      await this.#tx((ctx) =>
        recordRefusalTx(ctx, {
          transaction: "commitment",
          refused: r,
          actor,
          planDigest: input.planDigest,
          step: input.step,
          nowMs: input.nowMs,
        })
      );
    }
    return r;
  }

  async beginAttempt(input: AttemptInput) {
    const r = await this.#store.attempt(input, {
      newId: (p) => this.#ids.newId(p),
      point: this.#point,
    });
    if (r.ok) await this.#point("attempt:after-commit");
    else {
      const actor = tokenText(input.token);
      await this.#tx((ctx) =>
        recordRefusalTx(ctx, {
          transaction: "attempt",
          refused: r,
          actor,
          operationId: input.operationId,
          token: input.token,
          nowMs: input.nowMs,
        })
      );
    }
    return r;
  }

  recordResponse(input: ResponseInput): Promise<OperationRecord> {
    return this.#tx((ctx) => responseTx(ctx, input));
  }

  beginRecoveryAttempt(input: RecoveryAttemptInput) {
    return this.#tx((ctx) => recoveryAttemptTx(ctx, input));
  }

  recordRecoveryResponse(input: RecoveryResponseInput): Promise<void> {
    return this.#tx((ctx) => recoveryResponseTx(ctx, input));
  }

  recordPhase(input: PhaseInput): Promise<void> {
    return this.#tx(async (ctx) => {
      const op = await loadOperation(ctx.tx, input.operationId);
      assertOwner(ctx, op, input.token);
      const revision = await machineEvent(ctx, {
        machine: op.machine,
        kind: `phase-${input.kind}`,
        operationId: op.id,
        actor: tokenText(input.token),
        body: { phase: input.phase, detail: input.detail },
        nowMs: input.nowMs,
      });
      await INSERT_PHASE.execute(ctx.tx, {
        id: this.#ids.newId("phs"),
        operation_id: op.id,
        phase: input.phase,
        kind: input.kind,
        at_ms: input.nowMs,
        detail: JSON.stringify(input.detail),
        revision,
      });
    });
  }

  recordHealthRound(input: HealthRoundInput): Promise<string> {
    return this.#tx(async (ctx) => {
      assertCurrentEpoch(ctx, input.epoch);
      const id = this.#ids.newId("hr");
      const outcomes = input.results.map((r) => r.outcome);
      const verdict = outcomes.includes("fail")
        ? "fail"
        : outcomes.includes("unreadable") || outcomes.length === 0
        ? "unreadable"
        : "pass";
      await INSERT_HEALTH_ROUND.execute(ctx.tx, {
        id,
        cluster: input.cluster,
        operation_id: input.operationId ?? null,
        purpose: input.purpose,
        started_at_ms: input.startedAtMs,
        finished_at_ms: input.finishedAtMs,
        verdict,
      });
      const rows = input.results.map((r, idx) => ({
        round_id: id,
        idx,
        binding: r.binding,
        reader: r.reader ?? null,
        outcome: r.outcome,
        reason: r.reason,
        object_uid: r.objectUid ?? null,
        object_ref: r.objectRef ?? null,
        resource_version: r.resourceVersion ?? null,
        observed_at_ms: r.observedAtMs,
      }));
      // Many rows per statement: a round of a large cluster has hundreds of results, and each
      // statement costs a native round trip (issue 16: the journal dominated a simulated rollout).
      for (let i = 0; i < rows.length; i += RESULT_ROWS_PER_INSERT) {
        await INSERT_HEALTH_RESULTS(ctx.tx, rows.slice(i, i + RESULT_ROWS_PER_INSERT));
      }
      await appendEvent(ctx.tx, {
        atMs: input.finishedAtMs,
        kind: "health-round",
        operationId: input.operationId ?? null,
        epoch: ctx.inst.epoch,
        actor: "cairn",
        body: { round: id, purpose: input.purpose, verdict, results: input.results.length },
      });
      return id;
    });
  }

  recordEvidenceCheck(input: EvidenceCheckInput): Promise<number> {
    return this.#tx(async (ctx) => {
      const plan = await ctx.tx.selectFrom("plans").select("digest")
        .where("digest", "=", input.planDigest).executeTakeFirst();
      if (!plan) fail("OperationNotFound", `no plan ${input.planDigest} in the journal`);
      return await appendEvent(ctx.tx, {
        atMs: input.nowMs,
        kind: "evidence-check",
        epoch: ctx.inst.epoch,
        actor: `${input.actor.role}:${input.actor.identity}`,
        body: {
          plan: input.planDigest,
          manifest: input.manifestPath,
          manifestSha256: input.manifestSha256,
          verdict: input.verdict,
          detail: input.detail,
        },
      });
    });
  }

  recordDispatchCheck(input: DispatchCheckInput): Promise<number> {
    // No plan row is required: a plan refused at its first dispatch check is never bound.
    return this.#tx((ctx) => {
      assertCurrentEpoch(ctx, input.epoch);
      return appendEvent(ctx.tx, {
        atMs: input.nowMs,
        kind: "dispatch-check",
        machine: input.node,
        epoch: ctx.inst.epoch,
        actor: `${input.actor.role}:${input.actor.identity}`,
        body: { plan: input.planDigest, node: input.node, verdict: input.verdict, ...input.detail },
      });
    });
  }

  transition(input: TransitionInput): Promise<OperationRecord> {
    return this.#tx((ctx) => transitionTx(ctx, input));
  }

  classifySafeToRetry(
    operationId: string,
    token: OwnerToken,
    observationId: string,
    nowMs: number,
  ) {
    return this.#tx((ctx) => classifyTx(ctx, { operationId, token, observationId, nowMs }));
  }

  resumeAfterTakeover(input: ResumeInput): Promise<OperationRecord> {
    return this.#tx((ctx) => resumeTx(ctx, input));
  }

  async takeOver(input: TakeoverInput) {
    const r = await this.#tx((ctx) => takeoverTx(ctx, input));
    if (r.ok) await this.#point("takeover:after-commit");
    return r;
  }

  recordRecoveryDecision(input: RecoveryDecisionInput): Promise<void> {
    return this.#tx((ctx) => recoveryDecisionTx(ctx, input));
  }

  cancelNoAttempt(operationId: string, ground: CancelGround, actor: Actor, nowMs: number) {
    return this.#tx((ctx) => cancelTx(ctx, { operationId, ground, actor, nowMs }));
  }

  enterRecoveryMode(actor: Actor, evidence: string, nowMs: number): Promise<string> {
    return this.#tx((ctx) => enterRecoveryTx(ctx, { actor, evidence, nowMs }));
  }

  releaseRecoveryScope(machine: string, actor: Actor, nowMs: number): Promise<void> {
    return this.#tx((ctx) => releaseScopeTx(ctx, { machine, actor, nowMs }));
  }

  exitRecoveryMode(actor: Actor, nowMs: number): Promise<void> {
    return this.#tx((ctx) => exitRecoveryTx(ctx, { actor, nowMs }));
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    const r = await findOperation(this.#db, id);
    return r && toOperation(r);
  }

  async listOperations(): Promise<OperationRecord[]> {
    const rows = await this.#db.selectFrom("operations").selectAll().orderBy("created_at_ms")
      .orderBy("id").execute();
    return rows.map(toOperation);
  }

  async showOperation(id: string): Promise<OperationDetail | undefined> {
    const op = await this.getOperation(id);
    if (!op) return undefined;
    const attempts = await this.#db.selectFrom("attempts").selectAll()
      .where("operation_id", "=", id).orderBy("number").execute();
    const phases = await this.#db.selectFrom("phases").select(["phase", "kind", "at_ms", "detail"])
      .where("operation_id", "=", id).orderBy("revision").execute();
    const events = await this.#db.selectFrom("events").selectAll().where("operation_id", "=", id)
      .orderBy("seq").execute();
    return {
      operation: op,
      attempts: attempts.map(toAttempt),
      phases: phases.map((p) => ({
        phase: p.phase as OperationDetail["phases"][number]["phase"],
        kind: p.kind,
        atMs: p.at_ms,
        detail: p.detail,
      })),
      events: events.map(toEvent),
    };
  }

  async events(afterSeq = 0): Promise<JournalEvent[]> {
    const rows = await this.#db.selectFrom("events").selectAll().where("seq", ">", afterSeq)
      .orderBy("seq").execute();
    return rows.map(toEvent);
  }

  async verifyChain(): Promise<ChainCheck> {
    return checkChain(await this.#db.selectFrom("events").selectAll().orderBy("seq").execute());
  }

  planHistory(digest: string): Promise<PlanHistory | undefined> {
    return readPlanHistory(this.#store.snapshot, digest);
  }

  listPlans(): Promise<PlanEntry[]> {
    return readPlans(this.#db);
  }

  nameBindings(): Promise<NameBinding[]> {
    return readNameBindings(this.#db);
  }

  frozenMachines(): Promise<string[]> {
    return readFrozenMachines(this.#db);
  }

  machineObservations(machine: string): Promise<ObservationEntry[]> {
    return readMachineObservations(this.#db, machine);
  }

  async exportAll(): Promise<Record<string, unknown[]>> {
    const tables = [
      "installation",
      "epochs",
      "machines",
      "plans",
      "plan_names",
      "operations",
      "attempts",
      "observations",
      "phases",
      "health_rounds",
      "health_results",
      "recoveries",
      "recovery_scopes",
      "events",
    ] as const;
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = await this.#db.selectFrom(t).selectAll().execute();
    return out;
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}
