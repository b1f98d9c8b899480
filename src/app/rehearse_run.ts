/**
 * The adapters `cairn rehearse` reads through before the twin starts (`app/rehearsal.ts` starts
 * it): the plan file and its detached signatures, capped like every bound file, and the warn-level
 * JSON log of the rehearsal's engine on stderr. The command keeps its checks (faults, nodes, the
 * cluster's name) and the rendering.
 */
import { MAX_BOUND_FILE_BYTES, readNamedFile } from "../adapters/repo/bound_file_reader.ts";
import type { Logger } from "../ports/logger.ts";

/** The plan's bytes (a missing, unreadable or oversized file is a clear error naming it). */
export async function readRehearsalPlan(path: string): Promise<Uint8Array> {
  return await readNamedFile(path, { what: "plan", maxBytes: MAX_BOUND_FILE_BYTES });
}

/** `<plan>.sig` as text; none yet is the empty text (the approvals gate then refuses). */
export async function readPlanSignatures(planPath: string): Promise<string> {
  const bytes = await readNamedFile(`${planPath}.sig`, {
    what: "signatures",
    maxBytes: MAX_BOUND_FILE_BYTES,
    optional: true,
  });
  return new TextDecoder().decode(bytes ?? new Uint8Array());
}

/** Warnings and errors only, as JSON lines stamped by the wall clock. */
export async function rehearsalLog(write: (line: string) => void): Promise<Logger> {
  const { JsonLogger } = await import("../adapters/log/json_logger.ts");
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  return new JsonLogger({ write, clock: new SystemClock(), level: "warn" });
}
