/**
 * `cairn freeze` and `cairn unfreeze` (docs/operating.md#freeze): a cluster-wide freeze recorded in
 * the journal with its actor and reason. While frozen no new node commitment is made (the executor
 * holds, the commitment transaction refuses); a committed step is never interrupted.
 */
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, journalLocation } from "./journal_common.ts";

/** Builds the freeze or the unfreeze command. */
export function freezeCommand(frozen: boolean): Command {
  const verb = frozen ? "freeze" : "unfreeze";
  return {
    path: [verb],
    summary: frozen
      ? "Freeze a cluster: no new node commitment until it is unfrozen"
      : "Unfreeze a cluster (an approver's act); held rollouts resume",
    usage: `CLUSTER ${
      frozen ? "--reason TEXT " : ""
    }--actor PRINCIPAL --journal URL [--output json]`,
    help: `CLUSTER is the plans' metadata.cluster. ${
      frozen
        ? `Records the freeze with its actor and reason on the
journal's hash chain. Running rollouts hold before their next node's commitment; a step already
committed finishes or holds by the recovery rules, it is never cut short.`
        : `Records the end of the freeze (only an approver unfreezes);
held rollouts resume at their next check.`
    } Nothing is sent to the cluster.

Options:
${JOURNAL_HELP}
  --actor PRINCIPAL   who ${verb}s (recorded on the timeline)${
      frozen ? "\n  --reason TEXT       why (required; shown in holds and status)" : ""
    }
  --output json       machine-readable result`,
    options: {
      ...JOURNAL_OPTION,
      ...OUTPUT_OPTION,
      actor: { type: "string" },
      ...(frozen ? { reason: { type: "string" } } : {}),
    },
    positionals: { min: 1, max: 1 },
    async run(args, io) {
      const actor = args.values["actor"];
      if (typeof actor !== "string" || actor === "") {
        throw new UsageError("--actor PRINCIPAL is required");
      }
      const reason = frozen ? args.values["reason"] : "";
      if (typeof reason !== "string" || (frozen && reason.trim() === "")) {
        throw new UsageError("--reason TEXT is required to freeze");
      }
      const cluster = args.positionals[0]!;
      const { openJournalForFreeze } = await import("../app/freeze_run.ts");
      const journal = await openJournalForFreeze(journalLocation(args, io), Date.now());
      try {
        await journal.setClusterFrozen({
          cluster,
          frozen,
          reason,
          actor: { identity: actor, role: "approver" },
          nowMs: Date.now(),
        });
        const now = await journal.clusterFreeze(cluster);
        if (wantsJson(args)) printJson(io, { cluster, frozen, reason, actor, seq: now?.seq });
        else io.stdout(`cluster ${cluster} ${frozen ? `frozen: ${reason}` : "unfrozen"}\n`);
        return EXIT.ok;
      } finally {
        await journal.close();
      }
    },
  };
}
