/**
 * A plan's bound files as a branch holds them now: read through the PlanSource at the commit the
 * loop last fetched for that branch. The dispatch check reads the watched branch's current tip, so
 * a catalogue, health policy or evidence manifest changed on the branch after the plan was
 * approved no longer matches the digest the plan binds.
 */
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { PlanSource } from "../../ports/plan_source.ts";

/** Reads at `tip()` (called on every read: the tip moves as the loop fetches). */
export function branchFiles(
  source: PlanSource,
  branch: string,
  tip: () => string | undefined,
): BoundFileSource {
  return {
    describe: () => `${branch} at ${tip()?.slice(0, 12) ?? "(not fetched)"}`,
    async read(path) {
      const commit = tip();
      if (commit === undefined) return { status: "missing", detail: `${branch} not fetched yet` };
      try {
        const bytes = await source.readFile(commit, path);
        return bytes
          ? { status: "read", bytes }
          : { status: "missing", detail: `no ${path} on ${branch} at ${commit.slice(0, 12)}` };
      } catch (e) {
        const detail = e instanceof Error ? e.message : String(e);
        // A link, a non-file or an oversized blob is refused with its own reason, not "missing".
        const reason = (e as { reason?: unknown }).reason;
        if (
          reason === "BoundPathSymlink" || reason === "BoundFileNotRegular" ||
          reason === "BoundFileTooLarge"
        ) return { status: "refused", reason, detail };
        return { status: "missing", detail };
      }
    },
  };
}
