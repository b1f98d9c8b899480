/**
 * The expected-noise silences of a committed step, for every executing kind
 * (docs/operating.md#alert-veto-and-silences): opened when the step is committed, renewed whenever
 * the step waits (the step's clock carries the lease), expired when it ends, however it ends.
 */
import type { OperatedPlan } from "../../domain/plan/schema.ts";
import { leasedClock, openNoiseLease } from "../operating/silences.ts";
import type { StepState } from "./deps.ts";

/** Runs `body` on the committed step `s` under its expected-noise silences. */
export async function underNoiseLease<P extends OperatedPlan, O>(
  s: StepState<P>,
  body: (s: StepState<P>) => Promise<O>,
): Promise<O> {
  const lease = await openNoiseLease(s, s.deps.operating?.alertmanager);
  try {
    return await body({ ...s, deps: { ...s.deps, clock: leasedClock(s.deps.clock, lease) } });
  } finally {
    await lease.close();
  }
}
