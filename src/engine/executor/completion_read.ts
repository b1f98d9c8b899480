/**
 * The completion read every executable kind takes before it decides a node: its basis allocated
 * first (so the reading is ordered after the operation's last accounting), then the read.
 *
 * A read that cannot decide yet — it shows the state from before the change (an answer from a
 * lagging apid proxy or cache, issue 16) or shows nothing — is taken again, each time with a fresh
 * basis, while another read fits in the window. Deciding a node `failed` on a lagging answer would
 * call a machine that did what was asked failed; whatever is still read at the end of the window
 * is what the node is judged on.
 */
import type { Plan } from "../../domain/plan/schema.ts";
import type { StepState } from "./deps.ts";
import { controllerActor } from "./observe.ts";

/** A reading and the observation basis allocated right before it. */
export interface BasedReading<R> {
  readonly basis: number;
  readonly reading: R;
}

/**
 * Reads with a fresh basis until `readAgain(reading)` is false or another poll would not fit in
 * `windowMs` from now.
 */
export async function completionRead<R>(
  s: StepState<Plan>,
  o: {
    readonly windowMs: number;
    readonly read: () => Promise<R>;
    readonly readAgain: (reading: R) => boolean;
  },
): Promise<BasedReading<R>> {
  const { journal, clock, owner, pollIntervalMs } = s.deps;
  const actor = controllerActor(owner);
  const until = clock.now() + o.windowMs;
  let basis = await journal.startObservation(s.node, actor, clock.now());
  let reading = await o.read();
  while (o.readAgain(reading) && clock.now() + pollIntervalMs <= until) {
    await clock.sleep(pollIntervalMs, s.deps.signal);
    basis = await journal.startObservation(s.node, actor, clock.now());
    reading = await o.read();
  }
  return { basis, reading };
}
