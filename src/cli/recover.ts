/**
 * `cairn recover OP`: shows one operation's evidence and which recovery decisions are possible
 * now, or records one authorised decision (account an attempt after the settle floor, lift an
 * operation-owned cordon, classify on a completion observation). Resume is not rerun: nothing
 * here re-sends an install or a reboot.
 */
import { CairnError } from "../domain/errors.ts";
import { MIN_SETTLE_FLOOR_MS } from "../domain/operation.ts";
import type { Clock } from "../ports/clock.ts";
import type { Journal } from "../ports/journal.ts";
import type { Talos } from "../ports/talos.ts";
import {
  type Command,
  type CommandIO,
  EXIT,
  OUTPUT_OPTION,
  type ParsedArgs,
  printJson,
  reportProblems,
  style,
  UsageError,
  wantsJson,
} from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, openForReading } from "./journal_common.ts";
import {
  type EvidenceView,
  evidenceView,
  gatherEvidence,
} from "../engine/recovery/recover_actions.ts";
import type { RecoveryCluster } from "../engine/recovery/recover_actions.ts";
import type { DecisionResult } from "../engine/recovery/recover_decisions.ts";
import { renderEvidence } from "../report/recover_render.ts";

type Mode = "show" | "account" | "uncordon" | "classify";

function str(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

function required(args: ParsedArgs, name: string, what: string): string {
  return str(args, name) ?? (() => {
    throw new UsageError(`--${name} ${what} is required for this decision`);
  })();
}

function modeOf(args: ParsedArgs): Mode {
  const modes: Mode[] = [];
  if (str(args, "account")) modes.push("account");
  if (args.values["uncordon"] === true) modes.push("uncordon");
  if (args.values["classify"] === true) modes.push("classify");
  if (modes.length > 1) throw new UsageError(`choose one decision, got ${modes.join(", ")}`);
  return modes[0] ?? "show";
}

function settleFloorMs(args: ParsedArgs): number {
  const raw = str(args, "settle-floor-seconds") ?? "30";
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--settle-floor-seconds must be a positive number, got ${raw}`);
  }
  if (n * 1000 < MIN_SETTLE_FLOOR_MS) {
    throw new CairnError({
      reason: "SettleFloorTooShort",
      message: `settle floor ${n} s is below the 30 s minimum (a floor, not a bound)`,
    });
  }
  return n * 1000;
}

function stoppedAt(args: ParsedArgs): number | undefined {
  const raw = str(args, "executor-stopped-at");
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw new UsageError(`--executor-stopped-at must be RFC 3339, got ${raw}`);
  return ms;
}

/** Virtual time from a twin (rehearsals, tests) or the wall clock. */
interface Runtime {
  readonly clock: Clock;
  readonly timeoutClock?: Clock;
  readonly wrap: <T extends object>(port: T) => T;
  readonly callTimeoutMs: (ms: number) => number;
}

async function runtime(args: ParsedArgs): Promise<Runtime> {
  const twin = str(args, "twin-control");
  if (!twin) {
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    return { clock: new SystemClock(), wrap: (p) => p, callTimeoutMs: (ms) => ms };
  }
  const { syncingPort, TwinClock } = await import("../adapters/clock/twin_clock.ts");
  const clock = await TwinClock.connect(twin);
  return {
    clock,
    timeoutClock: clock.forTimeouts(20_000),
    wrap: (p) => syncingPort(p, clock),
    callTimeoutMs: (ms) => Math.min(ms, 20_000),
  };
}

async function connect(args: ParsedArgs, rt: Runtime, needTalos: boolean) {
  const { createClientNodeKube } = await import("../adapters/kube/client_node_kube.ts");
  const kube = rt.wrap(
    await createClientNodeKube({ kubeconfigPath: required(args, "kubeconfig", "K") }),
  );
  const talosPath = needTalos ? required(args, "talosconfig", "T") : str(args, "talosconfig");
  let talos: Talos | undefined;
  if (talosPath) {
    const { createGrpcTalos } = await import("../adapters/talos/grpc_talos.ts");
    const { loadTalosconfig } = await import("../adapters/talos/talosconfig.ts");
    const context = await loadTalosconfig(talosPath, str(args, "talos-context"));
    talos = await createGrpcTalos({ context });
  }
  const cluster: RecoveryCluster = {
    kube,
    ...(talos ? { talos: rt.wrap(talos) } : {}),
    clock: rt.clock,
    callTimeoutMs: rt.callTimeoutMs,
  };
  return { cluster, close: () => talos?.close() };
}

async function decide(
  journal: Journal,
  mode: Exclude<Mode, "show">,
  args: ParsedArgs,
  io: CommandIO,
): Promise<DecisionResult> {
  const op = args.positionals[0]!;
  const d = await import("../engine/recovery/recover_decisions.ts");
  const floor = mode === "account" ? settleFloorMs(args) : 0;
  const actor = mode === "classify"
    ? str(args, "actor") ?? "cairn-recover"
    : required(args, "actor", "PRINCIPAL");
  const evidence = mode === "account" ? required(args, "evidence", "TEXT") : "";
  const stopped = stoppedAt(args);
  const rt = await runtime(args);
  const { cluster, close } = await connect(args, rt, mode !== "uncordon");
  try {
    if (mode === "account") {
      const explanation = str(args, "explanation");
      return await d.accountAttempt(journal, cluster, {
        operationId: op,
        attemptId: str(args, "account")!,
        actor,
        evidence,
        ...(explanation ? { explanation } : {}),
        settleFloorMs: floor,
        ...(stopped !== undefined ? { executorStoppedAtMs: stopped } : {}),
      });
    }
    if (mode === "uncordon") {
      return await d.uncordonOwned(journal, cluster, { operationId: op, actor });
    }
    return await classify(journal, cluster, rt, args, io, { operationId: op, actor });
  } finally {
    close();
  }
}

async function classify(
  journal: Journal,
  cluster: RecoveryCluster,
  rt: Runtime,
  args: ParsedArgs,
  io: CommandIO,
  o: { operationId: string; actor: string },
): Promise<DecisionResult> {
  const { loadHealthPolicy, requireBoundPolicy } = await import("../app/run_plan.ts");
  const { ClusterEvidence } = await import("../engine/health/cluster_evidence.ts");
  const { JsonLogger } = await import("../adapters/log/json_logger.ts");
  const { classifyOperation } = await import("../engine/recovery/recover_decisions.ts");
  const { needTalos } = await import("../engine/recovery/recover_actions.ts");
  const policyPath = required(args, "health-policy", "P");
  // The bound health policy is the policy: the one given must be the operation's plan's own.
  const op = await journal.getOperation(o.operationId);
  const record = op ? await journal.getPlan(op.planDigest) : undefined;
  if (record) {
    const { parsePlan } = await import("../domain/plan/parse.ts");
    const bytes = new TextEncoder().encode(record.bytes);
    await requireBoundPolicy(policyPath, (await parsePlan(bytes, { file: record.name })).plan);
  }
  const policy = await loadHealthPolicy(policyPath);
  const evidence = new ClusterEvidence(cluster.kube, needTalos(cluster), rt.clock);
  try {
    return await classifyOperation(journal, cluster, {
      policy,
      evidence,
      ...(rt.timeoutClock ? { timeoutClock: rt.timeoutClock } : {}),
      intervalMs: 30_000,
      pollIntervalMs: 5_000,
      log: new JsonLogger({ write: (l) => io.stderr(l), clock: rt.clock, level: "warn" }),
    }, o);
  } finally {
    evidence.stop();
  }
}

async function show(journal: Journal, args: ParsedArgs, io: CommandIO): Promise<EvidenceView> {
  const rt = str(args, "twin-control") ? await runtime(args) : undefined;
  const e = await gatherEvidence(journal, {
    operationId: args.positionals[0]!,
    settleFloorMs: settleFloorMs(args),
    nowMs: rt ? rt.clock.now() : Date.now(),
  });
  const view = evidenceView(e);
  if (wantsJson(args)) printJson(io, view);
  else io.stdout(renderEvidence(view, style(io)));
  return view;
}

/** The journal speaks in epoch milliseconds; people read RFC 3339 next to them. */
function readableTimes(message: string): string {
  return message.replace(/\b1\d{12}\b/g, (ms) => `${ms} (${new Date(Number(ms)).toISOString()})`);
}

function refused(io: CommandIO, args: ParsedArgs, mode: Mode, e: CairnError): number {
  const message = readableTimes(e.message);
  if (wantsJson(args)) {
    printJson(io, { decision: mode, recorded: false, reason: e.reason, message });
    return EXIT.refused;
  }
  return reportProblems(io, [{ ...e.toProblem(), message }]);
}

export const command: Command = {
  path: ["recover"],
  summary: "Show an operation's evidence, or record one authorised recovery decision",
  usage: "OP --journal URL [--account ATTEMPT | --uncordon | --classify] [options] " +
    "[--output json]",
  help: `Without a decision flag, shows the operation: state, owner/generation/epoch, every attempt
(phase, sent at, transport and verification deadlines, response class, accounted by; UNACCOUNTED
ones marked), phase intents and facts (cordon provenance, drain, boot observed), and which
decisions are possible now and why not. Nothing is written.

Decisions (one at a time; each is recorded with its identity and evidence):
  --account ATTEMPT   a recovery-admin accounting decision (docs/recovery.md): the operation
                      is taken over first unless its executor is stopped or already taken over; a
                      recovery observation is taken now (node resourceVersion at the start and
                      end of the read, Talos version); the journal refuses until the settle
                      floor has elapsed. Needs --actor, --evidence, --kubeconfig, --talosconfig.
  --uncordon          lifts an OPERATION-OWNED cordon, only when the plan binds
                      recovery: [{action: uncordonOwnedCordon}] and a fresh read shows the
                      cordon's ownership unchanged (resourceVersion precondition). Needs
                      --actor and --kubeconfig.
  --classify          once every attempt is accounted, takes a completion observation (version,
                      schematic, health rounds) and moves an unresolved operation to completed or
                      failed; unreadable stays unresolved. Never re-sends install or reboot.
                      Needs --kubeconfig, --talosconfig, --health-policy.

Options:
${JOURNAL_HELP}
  --actor PRINCIPAL              who decides (recovery-admin)
  --evidence TEXT                what the decision rests on (recorded)
  --explanation TEXT             required when the node changed during the settle
  --settle-floor-seconds N       deployment settle floor (default 30; below 30 is refused)
  --executor-stopped-at RFC3339  the attempt's executor is known stopped (no takeover)
  --kubeconfig K, --talosconfig T, --talos-context NAME, --health-policy P
                                 (P must be byte for byte the policy the plan binds)
  --twin-control URL             use the twin's virtual clock (rehearsal journals, tests)
  --output json                  machine-readable output

Exit 0 means shown or the decision was recorded; 1 means refused, with the reason printed.`,
  options: {
    ...JOURNAL_OPTION,
    ...OUTPUT_OPTION,
    account: { type: "string" },
    uncordon: { type: "boolean" },
    classify: { type: "boolean" },
    actor: { type: "string" },
    evidence: { type: "string" },
    explanation: { type: "string" },
    "settle-floor-seconds": { type: "string" },
    "executor-stopped-at": { type: "string" },
    kubeconfig: { type: "string" },
    talosconfig: { type: "string" },
    "talos-context": { type: "string" },
    "health-policy": { type: "string" },
    "twin-control": { type: "string" },
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const mode = modeOf(args);
    const journal = await openForReading(args, io);
    try {
      if (mode === "show") {
        await show(journal, args, io);
        return EXIT.ok;
      }
      const r = await decide(journal, mode, args, io);
      if (wantsJson(args)) printJson(io, { ...r, recorded: true });
      else {io.stdout(
          `recorded ${r.decision}: ${r.message}\noperation ${r.operation}: ${r.state}\n`,
        );}
      return EXIT.ok;
    } catch (e) {
      if (e instanceof CairnError) return refused(io, args, mode, e);
      throw e;
    } finally {
      await journal.close();
    }
  },
};
