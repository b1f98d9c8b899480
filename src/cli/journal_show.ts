import { CairnError } from "../domain/errors.ts";
import type { Journal, OperationDetail } from "../ports/journal.ts";
import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, openForReading } from "./journal_common.ts";

const iso = (ms: number) => new Date(ms).toISOString();

async function listText(j: Journal): Promise<string> {
  const inst = await j.installation();
  const lines = [
    `epoch ${inst.epoch}${
      inst.recoveryMode ? " (RECOVERY MODE)" : ""
    }, schema ${inst.schemaVersion}`,
  ];
  for (const o of await j.listOperations()) {
    lines.push(
      `${o.id}  ${o.state.padEnd(10)} ${o.machine.padEnd(10)} ${o.step.padEnd(14)} ` +
        `plan ${
          o.planDigest.slice(0, 12)
        }  owner ${o.owner}/${o.ownerGen}  attempts ${o.attemptsUsed}`,
    );
  }
  return lines.join("\n") + "\n";
}

function detailText(d: OperationDetail): string {
  const o = d.operation;
  const lines = [
    `operation ${o.id}: ${o.state}`,
    `  plan ${o.planDigest} step ${o.step} machine ${o.machine} cluster ${o.cluster}`,
    `  owner ${o.owner} generation ${o.ownerGen} epoch ${o.ownerEpoch}`,
    "attempts:",
    ...d.attempts.map((a) =>
      `  #${a.number} ${a.id} ${a.phase} sent ${iso(a.sentAtMs)} response ${
        a.responseClass ?? "none"
      } accounted ${a.accountedBy ?? "NO"}`
    ),
    "phases:",
    ...d.phases.map((p) => `  ${iso(p.atMs)} ${p.phase} ${p.kind} ${p.detail}`),
    "timeline:",
    ...d.events.map((e) =>
      `  ${String(e.seq).padStart(5)} ${iso(e.atMs)} r${
        e.revision ?? "-"
      } ${e.kind} ${e.actor} ${e.body}`
    ),
  ];
  return lines.join("\n") + "\n";
}

/** `cairn journal show [OP]`: operations, or one operation's attempts, phases and timeline. */
export const command: Command = {
  path: ["journal", "show"],
  summary: "Show journal operations, or one operation in full",
  usage: "[OP] --journal URL [--output json]",
  help: `Without OP, lists every operation with its state, machine, plan and owner. With OP,
shows its attempts (with response class and accounting), phase facts and timeline.

${JOURNAL_HELP}`,
  options: { ...OUTPUT_OPTION, ...JOURNAL_OPTION },
  positionals: { min: 0, max: 1 },
  async run(args, io) {
    const j = await openForReading(args, io);
    try {
      const id = args.positionals[0];
      if (id === undefined) {
        if (wantsJson(args)) {
          printJson(io, {
            installation: await j.installation(),
            operations: await j.listOperations(),
          });
        } else io.stdout(await listText(j));
        return EXIT.ok;
      }
      const d = await j.showOperation(id);
      if (!d) {
        throw new CairnError({ reason: "OperationNotFound", message: `no operation ${id}` });
      }
      if (wantsJson(args)) printJson(io, d);
      else io.stdout(detailText(d));
      return EXIT.ok;
    } finally {
      await j.close();
    }
  },
};
