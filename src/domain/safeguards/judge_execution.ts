/**
 * Execution (E) and observation (O) rows judged from what the journal recorded: the identity
 * evidence each attempt was admitted on, the boot and completion observations, the rounds and
 * their per-binding results, the rollout slot's holdings, the phases and their accounting. A row
 * passes only on records that show it; with nothing to judge it is `not-evaluated` saying what
 * is missing. Pure.
 */
import type {
  RecordedAttempt,
  RecordedOperation,
  RecordedPlan,
  RecordedRound,
  RecordedStep,
} from "./recorded.ts";
import { CONFIG_APPLY_ROWS } from "./judge_config_apply.ts";
import { INSTALLER_UNRESOLVED, judgeInstallers } from "./judge_installer.ts";
import { judgeKubernetesExecution } from "./judge_kubernetes.ts";
import { HEALTH_ROWS, rowOfReader } from "./reader_rows.ts";
import { type Judged, type RowResult, rowResult } from "./result.ts";
import type { SafeguardId } from "./table.ts";

/** A hop of the plan: the version it boots and the schematic it pins. */
export interface PlannedHop {
  readonly to: string;
  readonly schematic: string;
}

/** What the execution rows are judged from. */
export interface ExecutionRecord extends RecordedPlan {
  readonly hops: readonly PlannedHop[];
}

type Judge = (r: Ctx) => Judged;

interface Ctx extends ExecutionRecord {
  /** Operations by commitment time. */
  readonly ops: readonly RecordedOperation[];
  readonly stepOf: ReadonlyMap<string, RecordedStep>;
  /** For each operation (same order), the gate round that authorised its commitment. */
  readonly deciding: readonly (RecordedRound | undefined)[];
}

const JUDGES: ReadonlyArray<readonly [SafeguardId, Judge]> = [
  ["NodeIdentityBound", identityPerAttempt],
  ["SchematicPreserved", schematicObserved],
  ["PreviewReadOnly", authorityFromApproval],
  ["RolloutOrdered", ordered],
  ["SingleRolloutSlot", singleSlot],
  ["HealthReadFreshEachRound", freshRounds],
  ["CallsBoundedByRemainingTime", boundedCalls],
  ["ClusterGate", gateBeforeCommit],
  ["PhasesRecordedSeparately", phasesSeparate],
  ["PostconditionsThenOwnedUncordon", verifiedBeforeOwnedUncordon],
  ["PostGateBeforeNextNode", postGateBeforeNext],
];

/** Every row the journal can speak to; none passes without a record that shows it. */
export function judgeExecution(record: ExecutionRecord): RowResult[] {
  const ops = record.operations.slice().sort((a, b) => a.createdAtMs - b.createdAtMs);
  const ctx: Ctx = {
    ...record,
    ops,
    stepOf: new Map(record.plan.steps.map((s) => [s.step, s])),
    deciding: decidingGates(record.healthRounds, ops),
  };
  // A ConfigApply judges rows 2, 20 and 21 by its own records (judge_config_apply.ts).
  const configRows = record.plan.kind === "ConfigApply" ? new Map(CONFIG_APPLY_ROWS) : undefined;
  const rows = JUDGES.map(([id, judge]) => [id, configRows?.get(id) ?? judge] as const).map((
    [id, judge],
  ) =>
    rowResult(
      id,
      ops.length === 0
        ? { verdict: "not-evaluated", evidence: "no operation recorded yet" }
        : judge(ctx),
    )
  );
  const all = [
    ...rows,
    ...healthRows(ctx),
    rowResult(
      "InstallerImageExists",
      configRows
        ? { verdict: "not-applicable", evidence: "a ConfigApply installs no image" }
        : installerBeforeCommit(ctx),
    ),
  ];
  if (record.plan.kind !== "KubernetesUpgrade") return all;
  // A KubernetesUpgrade's own rows replace the ones about OS images, installers and cordons.
  const own = judgeKubernetesExecution(record);
  const mine = new Set(own.map((r) => r.id));
  return [...all.filter((r) => !mine.has(r.id)), ...own];
}

function pass(evidence: string): Judged {
  return { verdict: "pass", evidence };
}

function fail(evidence: string): Judged {
  return { verdict: "fail", evidence, reason: "SafeguardViolated" };
}

function notEvaluated(evidence: string): Judged {
  return { verdict: "not-evaluated", evidence };
}

function names(ops: readonly RecordedOperation[]): string {
  return ops.map((o) => o.machine).join(", ");
}

/**
 * Each operation's deciding gate: the last cluster gate round that finished by its commitment and
 * after the previous one. Commitments recorded in the same millisecond (operations that took no
 * time on a virtual clock) cannot be ordered against rounds of that millisecond by time alone:
 * there each takes a round of its own, one no earlier commitment took, so N commitments need N
 * gate rounds and none is counted twice.
 */
function decidingGates(
  rounds: readonly RecordedRound[],
  ops: readonly RecordedOperation[],
): (RecordedRound | undefined)[] {
  const taken = new Set<string>();
  return ops.map((op, k) => {
    const prev = ops[k - 1];
    const r = rounds.filter((r) =>
      r.purpose === "gate" && r.operationId === null && r.finishedAtMs <= op.createdAtMs &&
      (prev === undefined || r.finishedAtMs > prev.createdAtMs ||
        (r.finishedAtMs === prev.createdAtMs && !taken.has(r.id)))
    ).at(-1);
    if (r) taken.add(r.id);
    return r;
  });
}

/** The last post-gate round of `op`, if it finished by `byMs`. */
function lastPostGate(c: Ctx, op: RecordedOperation, byMs = Infinity): RecordedRound | undefined {
  return c.healthRounds.filter((r) =>
    r.purpose === "post-gate" && r.operationId === op.id && r.finishedAtMs <= byMs
  ).at(-1);
}

/**
 * With no attempt admitted, the row holds only if an identity re-observation on an operation
 * refused the first send because another machine was at the address (the guard fired, nothing
 * went out); an unreadable identity proves nothing either way.
 */
function noAttempt(c: Ctx): Judged {
  // A re-observation after the commitment's own evidence (the first that named a machine).
  const refusals = (reason: string) =>
    c.ops.flatMap((o) => {
      const committed = o.observations.find((x) => x.purpose === "evidence" && x.machineIdentity);
      return o.observations.filter((x) =>
        committed !== undefined && x.purpose === "evidence" && x.basis > committed.basis &&
        x.digest.startsWith(`${reason}:`)
      ).map(() => o.machine);
    });
  const mismatched = refusals("MachineIdentityMismatch");
  if (mismatched.length) {
    return pass(
      `no attempt was admitted: the identity re-observed before the first send named another ` +
        `machine than the commitment's on ${[...new Set(mismatched)].join(", ")}; nothing was sent`,
    );
  }
  const unreadable = refusals("MachineIdentityUnreadable");
  return notEvaluated(
    unreadable.length
      ? `no attempt was admitted: the machine identity of ${
        [...new Set(unreadable)].join(", ")
      } could not be read before the first send`
      : "no attempt recorded: no identity was needed yet",
  );
}

/**
 * Row 1: the journal admits an attempt only on an identity observation it names; each one must be
 * an `evidence` read of that machine, showing the identity the plan binds and naming the machine
 * its commitment bound, taken before the send.
 */
function identityPerAttempt(c: Ctx): Judged {
  let n = 0;
  const bad: string[] = [], moved: string[] = [], unnamed: string[] = [];
  for (const o of c.ops) {
    const bound = c.stepOf.get(o.step)?.preDigest;
    // The machine the commitment bound: its own evidence, the first identity read of the plan.
    const committed = o.observations.find((x) => x.purpose === "evidence" && x.machineIdentity)
      ?.machineIdentity;
    for (const a of o.attempts) {
      n++;
      const at = `${o.machine} ${a.phase} #${a.number}`;
      const ev = o.observations.find((x) => x.id === a.evidenceId);
      const ok = ev !== undefined && ev.purpose === "evidence" && bound !== undefined &&
        ev.digest === bound && ev.observedAtMs <= a.sentAtMs;
      if (!ok) bad.push(at);
      else if (!ev.machineIdentity) unnamed.push(at);
      else if (ev.machineIdentity !== committed) moved.push(`${at} (${ev.machineIdentity})`);
    }
  }
  if (n === 0) return noAttempt(c);
  if (bad.length) {
    return fail(
      `attempts without a matching identity observation before the send: ${bad.join(", ")}`,
    );
  }
  if (moved.length) {
    return fail(
      `attempts whose identity observation names another machine than the commitment's: ${
        moved.join(", ")
      }`,
    );
  }
  if (unnamed.length) {
    return notEvaluated(
      `${unnamed.length} of ${n} attempts' identity observations name no ` +
        "machine (UUID, node, address) seen on both sides",
    );
  }
  return pass(
    `each of ${n} attempts names an identity observation taken before the send that ` +
      "shows the identity the plan binds and the same machine (UUID, node, address, read on both " +
      "sides) as its commitment",
  );
}

/**
 * Row 2: every boot observed the schematic its hop pins (intermediate hops included), and every
 * completed operation's completion observation equals the bound postcondition (target version,
 * pinned schematic, bound health).
 */
function schematicObserved(c: Ctx): Judged {
  const pinned = new Map(c.hops.map((h) => [h.to, h.schematic]));
  const bad: string[] = [];
  let boots = 0, completions = 0;
  for (const o of c.ops) {
    for (const p of o.phases) {
      if (p.phase !== "boot-observed" || p.kind !== "fact") continue;
      boots++;
      const want = pinned.get(String(p.detail["version"]));
      if (want === undefined || p.detail["schematic"] !== want) {
        bad.push(
          `${o.machine} booted ${String(p.detail["version"])} with schematic ` +
            `${String(p.detail["schematic"])}`,
        );
      }
    }
    if (o.state !== "completed") continue;
    const post = c.stepOf.get(o.step)?.postDigest;
    const seen = o.observations.filter((x) => x.purpose === "completion").at(-1);
    if (!seen || seen.digest !== post) {
      bad.push(
        `${o.machine} completed without a completion observation of the bound postcondition`,
      );
    } else completions++;
  }
  if (bad.length) return fail(bad.join("; "));
  if (completions === 0) return notEvaluated("no completion observation recorded yet");
  const last = c.hops.at(-1);
  return pass(
    `${boots} boots each observed their hop's pinned schematic; ${completions} ` +
      `completion observations equal the bound postcondition` +
      (last ? ` (${last.to}, schematic ${last.schematic.slice(0, 12)}…)` : ""),
  );
}

/** Row 4 at execution: authority is the plan's recorded approval, before every commitment. */
function authorityFromApproval(c: Ctx): Judged {
  const at = c.plan.approvedAtMs;
  if (at === null) return fail("operations were committed for a plan the journal never approved");
  const early = c.ops.filter((o) => o.createdAtMs < at);
  return early.length ? fail(`committed before the plan's approval: ${names(early)}`) : pass(
    `all ${c.ops.length} commitments follow the plan's recorded approval; no flag ` +
      "authorises a mutation",
  );
}

/** Row 5: operations were created in plan order. */
function ordered(c: Ctx): Judged {
  const order = c.plan.steps.map((s) => s.step);
  const seen = c.ops.map((o) => order.indexOf(o.step));
  const ok = seen.every((v, k) => v >= 0 && (k === 0 || v > seen[k - 1]!));
  return ok
    ? pass(`${c.ops.length} operations committed in plan order (workers first)`)
    : fail(`operations committed out of plan order: ${names(c.ops)}`);
}

/**
 * Row 6: the cluster's rollout slot, from recorded holdings across every plan: no commitment
 * while another operation still held it.
 */
function singleSlot(c: Ctx): Judged {
  const held = c.slot.slice().sort((a, b) => a.heldFromMs - b.heldFromMs);
  const overlaps: string[] = [];
  for (let k = 1; k < held.length; k++) {
    const prev = held[k - 1]!, cur = held[k]!;
    if (prev.releasedAtMs === null || prev.releasedAtMs > cur.heldFromMs) {
      overlaps.push(`${cur.machine} committed while ${prev.machine} held the slot`);
    }
  }
  return overlaps.length ? fail(overlaps.join("; ")) : pass(
    `${held.length} slot holding(s) on the cluster; none began before the previous one was ` +
      `released${held.at(-1)?.releasedAtMs === null ? " (the last still holds it)" : ""}`,
  );
}

/**
 * Row 11: every round re-read its bindings inside its own window (no result observed outside
 * it, none missing against the other rounds of its purpose), and no round passed over a result
 * that did not pass.
 */
function freshRounds(c: Ctx): Judged {
  if (c.healthRounds.length === 0) return notEvaluated("no health round recorded yet");
  const bindingsOf = new Map<string, Set<string>>();
  const bad: string[] = [];
  let results = 0;
  for (const r of c.healthRounds) {
    results += r.results.length;
    const set = new Set(r.results.map((x) => x.binding));
    const want = bindingsOf.get(r.purpose);
    if (!want) bindingsOf.set(r.purpose, set);
    const missing = [...(want ?? set)].filter((b) => !set.has(b));
    if (r.results.length === 0) bad.push(`${r.purpose} round ${r.id} has no results`);
    else if (missing.length) {
      bad.push(`${r.purpose} round ${r.id} did not read ${missing.join(", ")}`);
    }
    const outside = r.results.filter((x) =>
      x.observedAtMs < r.startedAtMs || x.observedAtMs > r.finishedAtMs
    );
    if (outside.length) {
      bad.push(`${r.purpose} round ${r.id} used ${outside.length} result(s) read outside it`);
    }
    if (r.verdict === "pass" && r.results.some((x) => x.outcome !== "pass")) {
      bad.push(`${r.purpose} round ${r.id} passed over a result that did not pass`);
    }
  }
  return bad.length ? fail(bad.join("; ")) : pass(
    `${c.healthRounds.length} rounds, ${results} results: every binding re-read inside ` +
      "its own round; no round passed over a failing or unreadable result",
  );
}

/**
 * Row 12: every attempt carries absolute deadlines (transport first), and no response accounted
 * for an attempt after its verification deadline. (The transport deadline aborts the call; the
 * response is recorded a journal write later, so the recorded time is held to the outer bound.)
 */
function boundedCalls(c: Ctx): Judged {
  const atts: [RecordedOperation, RecordedAttempt][] = c.ops.flatMap((o) =>
    o.attempts.map((a) => [o, a] as [RecordedOperation, RecordedAttempt])
  );
  if (atts.length === 0) return notEvaluated("no attempt recorded yet");
  const bad = atts.filter(([, a]) =>
    !(a.sentAtMs < a.transportDeadlineMs && a.transportDeadlineMs <= a.verificationDeadlineMs) ||
    (a.accountedBy === "response" && a.response !== null &&
      a.response.atMs > a.verificationDeadlineMs)
  ).map(([o, a]) => `${o.machine} ${a.phase} #${a.number}`);
  return bad.length ? fail(`attempts outside their recorded deadlines: ${bad.join(", ")}`) : pass(
    `${atts.length} attempts, each with absolute transport and verification deadlines ` +
      "and any accounting response recorded before its verification deadline",
  );
}

/** Row 13: a passing cluster gate round authorised each commitment. */
function gateBeforeCommit(c: Ctx): Judged {
  const missing = c.ops.filter((_o, k) => c.deciding[k]?.verdict !== "pass");
  if (missing.length) {
    return fail(`no passing gate round before the commitment of ${names(missing)}`);
  }
  const gaps = c.ops.filter((_o, k) =>
    !c.deciding[k]!.results.some((x) => x.reader && rowOfReader(x.reader) === "ClusterGate")
  );
  return gaps.length
    ? notEvaluated(
      `the gate before ${names(gaps)} recorded no node, etcd, Talos-service or ` +
        "version reading",
    )
    : pass(
      `a passing gate round with node, etcd and Talos readings preceded each of ` +
        `${c.ops.length} commitments`,
    );
}

/** Row 20: install, cordon, drain and reboot were each attempted on their own. */
function phasesSeparate(c: Ctx): Judged {
  const SEPARATE = ["install", "cordon", "drain", "reboot"];
  const done = c.ops.filter((o) => o.state === "completed");
  if (done.length === 0) return notEvaluated("no operation completed yet");
  const bad = done.filter((o) => SEPARATE.some((p) => !o.attempts.some((a) => a.phase === p)));
  return bad.length
    ? fail(`phases not separately attempted on ${names(bad)}`)
    : pass(`${SEPARATE.join(", ")} attempted and accounted separately on ${done.length} nodes`);
}

/**
 * Row 21: a passing verification preceded each uncordon, and only a cordon the operation
 * recorded as its own was undone.
 */
function verifiedBeforeOwnedUncordon(c: Ctx): Judged {
  const done = c.ops.filter((o) => o.state === "completed");
  if (done.length === 0) return notEvaluated("no operation completed yet");
  const bad: string[] = [];
  for (const o of done) {
    const uncordon = o.attempts.find((a) => a.phase === "uncordon");
    const verified = c.healthRounds.some((r) =>
      r.operationId === o.id && r.purpose === "verify" && r.verdict === "pass" &&
      (!uncordon || r.finishedAtMs <= uncordon.sentAtMs)
    );
    if (!verified) bad.push(`${o.machine}: no passing verification before the uncordon`);
    const owned = o.phases.some((p) =>
      p.phase === "cordon" && p.kind === "fact" && p.detail["cordonedByOperation"] === true
    );
    if (uncordon && !owned) {
      bad.push(`${o.machine}: uncordoned a cordon it did not record as its own`);
    }
  }
  return bad.length ? fail(bad.join("; ")) : pass(
    `verification passed before the uncordon on ${done.length} nodes; each uncordon ` +
      "undid a cordon the operation recorded as its own",
  );
}

/**
 * Row 22: before each next commitment, the previous node's every attempt was accounted and a
 * post-gate round of that node passed.
 */
function postGateBeforeNext(c: Ctx): Judged {
  if (c.ops.length < 2 && c.ops[0]?.state !== "completed") {
    return notEvaluated("no next node started and no node completed yet");
  }
  const bad: string[] = [];
  c.ops.forEach((o, k) => {
    const next = c.ops[k + 1];
    const by = next?.createdAtMs ?? Infinity;
    if (!next && o.state !== "completed") return;
    if (lastPostGate(c, o, by)?.verdict !== "pass") {
      bad.push(`no passing post-gate of ${o.machine}${next ? ` before ${next.machine}` : ""}`);
    }
    const open = o.attempts.filter((a) =>
      a.accountedBy === null || (a.response !== null && a.response.atMs > by)
    );
    if (next && open.length) {
      bad.push(
        `${next.machine} committed with ${open.length} attempt(s) of ${o.machine} unaccounted`,
      );
    }
  });
  return bad.length ? fail(bad.join("; ")) : pass(
    "each next node was committed only after every attempt of the previous one was " +
      "accounted and its post-gate passed",
  );
}

/**
 * Rows 13–18 by reader kind over the deciding rounds (the gate before each commitment, the last
 * post-gate of each node): every deciding round must have read the row's bindings and passed
 * them. Row 13 is judged above; its reader coverage is part of that judgement.
 */
function healthRows(c: Ctx): RowResult[] {
  const deciding = [
    ...c.deciding.filter((r): r is RecordedRound => r !== undefined),
    ...c.ops.map((o) => lastPostGate(c, o)).filter((r): r is RecordedRound => r !== undefined),
  ];
  return HEALTH_ROWS.filter(([id]) => id !== "ClusterGate").map(([id, readers]) => {
    if (deciding.length === 0) {
      return rowResult(id, notEvaluated("no gate or post-gate round recorded yet"));
    }
    const hits = deciding.map((r) => ({
      r,
      mine: r.results.filter((x) => x.reader !== null && rowOfReader(x.reader) === id),
    }));
    const bindings = [...new Set(hits.flatMap((h) => h.mine.map((x) => x.binding)))];
    const without = hits.filter((h) => h.mine.length === 0).length;
    if (bindings.length === 0) {
      const unlabelled = deciding.some((r) => r.results.some((x) => x.reader === null));
      return rowResult(
        id,
        notEvaluated(
          unlabelled
            ? "the rounds were recorded without reader kinds (journal before schema 3)"
            : `no ${readers} binding was read in the ${deciding.length} deciding rounds`,
        ),
      );
    }
    const failed = hits.filter((h) => h.mine.some((x) => x.outcome === "fail")).length;
    const unread = hits.filter((h) => h.mine.some((x) => x.outcome === "unreadable")).length;
    const what = `${bindings.join(", ")} (${readers})`;
    if (failed) return rowResult(id, fail(`${what} failed in ${failed} deciding rounds`));
    if (unread || without) {
      return rowResult(id, {
        verdict: "unreadable",
        evidence: `${what}: unreadable in ${unread} and absent from ${without} of ` +
          `${deciding.length} deciding rounds`,
        reason: "SafeguardUnreadable",
      });
    }
    return rowResult(
      id,
      pass(
        `${what} passed in all ${deciding.length} deciding rounds (the gate before each ` +
          "commitment, the last post-gate of each node)",
      ),
    );
  });
}

/**
 * Row 10: before each commitment, the dispatch check journaled for that node resolved every hop's
 * installer, for the plan's platform, to the pinned digest.
 */
function installerBeforeCommit(c: Ctx): Judged {
  if (c.ops.length === 0) return INSTALLER_UNRESOLVED;
  const judged = c.ops.map((o, k) => {
    const prev = c.ops[k - 1];
    const check = c.dispatchChecks.filter((d) =>
      d.node === o.machine && d.atMs <= o.createdAtMs &&
      (prev === undefined || d.atMs >= prev.createdAtMs)
    ).at(-1);
    return { op: o, j: check ? judgeInstallers(check.installers) : INSTALLER_UNRESOLVED };
  });
  const worst = (v: Judged["verdict"]) => judged.filter((x) => x.j.verdict === v);
  for (const v of ["fail", "unreadable", "not-evaluated"] as const) {
    const hit = worst(v);
    if (hit.length === 0) continue;
    const first = hit[0]!.j;
    const before = `before the commitment of ${names(hit.map((x) => x.op))}`;
    return {
      ...first,
      evidence: v === "not-evaluated"
        ? `installer not resolved ${before}: no resolution to the pinned per-platform digest ` +
          "was recorded"
        : `${before}: ${first.evidence}`,
    };
  }
  return pass(
    `before each of ${c.ops.length} commitments the dispatch check resolved the installer to ` +
      `its pinned per-platform digest (${judged[0]!.j.evidence})`,
  );
}
