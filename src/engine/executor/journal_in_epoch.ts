/**
 * The journal as a controller that started in one epoch writes to it.
 *
 * Acts that issue or use an owner token (commit, takeover, attempts, transitions) are fenced by
 * their token or the epoch they must name; a hook claim names its epoch and its discharge the
 * claim's (`engine/operating/owed_hooks.ts`). The acts without one — an observation and
 * its basis, a health round, a dispatch or Kubernetes check, a rollout event — would otherwise be
 * recorded in whatever epoch the journal is in: a controller that outlived a journal restore or a
 * recovery entry would go on writing rounds and observations into the new epoch, naming
 * operations the restored journal no longer has, where a successor's classification or a report
 * could read them (docs/operation-model.md §2.8, DST invariant 17).
 *
 * This wrapper stamps every such act with the controller's epoch, so the journal refuses it
 * (`EpochSuperseded`, nothing written) once the epoch moved. It is built once where a run's ports
 * are assembled (`executionDeps`, the ComponentUpgrade run), so an act added later is fenced
 * without any call site remembering to pass the epoch.
 */
import type { Journal } from "../../ports/journal.ts";

/** The journal acts that carry no owner token, each stamped with the controller's epoch. */
type TokenlessAct =
  | "startObservation"
  | "recordObservation"
  | "recordHealthRound"
  | "recordDispatchCheck"
  | "recordRolloutEvent";

/**
 * `journal` with every token-less act carrying `epoch`. Without an epoch (`cairn recover`, whose
 * admin acts in the current epoch by design) the journal is returned as it is.
 */
export function journalInEpoch(journal: Journal, epoch: string | undefined): Journal {
  if (epoch === undefined) return journal;
  const stamped: Pick<Journal, TokenlessAct> = {
    startObservation: (machine, actor, nowMs) =>
      journal.startObservation(machine, actor, nowMs, epoch),
    recordObservation: (input) => journal.recordObservation({ ...input, epoch }),
    recordHealthRound: (input) => journal.recordHealthRound({ ...input, epoch }),
    recordDispatchCheck: (input) => journal.recordDispatchCheck({ ...input, epoch }),
    recordRolloutEvent: (input) => journal.recordRolloutEvent({ ...input, epoch }),
  };
  // The journal's own methods, bound to it once (its private state lives on the instance).
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(journal, {
    get(target, prop) {
      if (Object.hasOwn(stamped, prop)) return stamped[prop as TokenlessAct];
      let v = bound.get(prop);
      if (v === undefined) {
        v = Reflect.get(target, prop, target);
        if (typeof v === "function") v = v.bind(target);
        bound.set(prop, v);
      }
      return v;
    },
  });
}
