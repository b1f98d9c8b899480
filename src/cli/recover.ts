/**
 * `cairn recover OP`: shows one operation's evidence and which recovery decisions are possible
 * now, or records one authorised decision (account an attempt after the settle floor, lift an
 * operation-owned cordon, classify on a completion observation). Resume is not rerun: nothing
 * here re-sends an install or a reboot.
 */
import {
  CLUSTER_OPTIONS,
  clusterFlags,
  requireKubeconfig,
  requireTalosconfig,
} from "./cluster_flags.ts";
import { CairnError } from "../domain/errors.ts";
import { MIN_SETTLE_FLOOR_MS } from "../domain/operation.ts";
import type { Journal } from "../ports/journal.ts";
import type { RecoveryRuntime } from "../app/recover_wiring.ts";
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

/** The cluster the decision reads, from the flags (a talosconfig is required unless `needTalos` is false). */
async function connect(
  args: ParsedArgs,
  io: CommandIO,
  rt: RecoveryRuntime,
  needTalos: boolean,
) {
  const where = clusterFlags(args, io);
  const talosconfig = needTalos ? requireTalosconfig(where) : where.talosconfig;
  const { connectRecoveryCluster } = await import("../app/recover_wiring.ts");
  return await connectRecoveryCluster(rt, {
    kubeconfig: requireKubeconfig(where),
    ...(talosconfig ? { talosconfig } : {}),
    ...(where.talosContext ? { talosContext: where.talosContext } : {}),
    ...(where.kubeContext ? { kubeContext: where.kubeContext } : {}),
  });
}

function runtime(args: ParsedArgs): Promise<RecoveryRuntime> {
  return import("../app/recover_wiring.ts").then((m) =>
    m.recoveryRuntime(str(args, "twin-control"))
  );
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
  const { cluster, close } = await connect(args, io, rt, mode !== "uncordon");
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
      const { uncordonOwned } = await import("../engine/recovery/recover_uncordon.ts");
      return await uncordonOwned(journal, cluster, { operationId: op, actor });
    }
    return await classify(journal, cluster, rt, args, io, { operationId: op, actor });
  } finally {
    close();
  }
}

async function classify(
  journal: Journal,
  cluster: RecoveryCluster,
  rt: RecoveryRuntime,
  args: ParsedArgs,
  io: CommandIO,
  o: { operationId: string; actor: string },
): Promise<DecisionResult> {
  const { classifyWithBoundPolicy } = await import("../app/recover_wiring.ts");
  return await classifyWithBoundPolicy(journal, cluster, rt, {
    ...o,
    policyPath: required(args, "health-policy", "P"),
    writeLog: (l) => io.stderr(l),
  });
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
  --kubeconfig K, --talosconfig T (default: $KUBECONFIG, $TALOSCONFIG), --context NAME,
  --talos-context NAME, --health-policy P
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
    ...CLUSTER_OPTIONS,
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
