/**
 * The lowest machine-configuration version a node can hold now, as this plan's own journal shows
 * it. A component step changes a node's configuration by applying a whole document: the one it
 * read, with one image replaced. A read answered from before an earlier step's change (a lagging
 * apid proxy or cache) would make that apply undo the earlier change — a control-plane component
 * put back to the old version by cairn itself, which the next preflight then sees as version
 * skew. COSI versions only grow, so a read older than what the journal already proves is stale
 * by construction and is never a basis for a change.
 */
import type { Journal } from "../../ports/journal.ts";

/** The phase whose intent names the configuration version its document was based on. */
const CONFIG_PHASE = "component-config";

/** A COSI resource version as a number; undefined when it is not a decimal version. */
export function configVersionOf(version: string): bigint | undefined {
  return /^\d{1,20}$/.test(version) ? BigInt(version) : undefined;
}

/**
 * The floor from this plan's other operations on `node`: each configuration change's intent
 * names the version it was based on (the node held at least that); an accepted change left the
 * node at least one version later. Undefined when no earlier change of this plan touched it.
 */
export async function configVersionFloor(
  journal: Pick<Journal, "listOperations" | "showOperation">,
  planDigest: string,
  node: string,
  exceptOperation: string,
): Promise<bigint | undefined> {
  const earlier = (await journal.listOperations()).filter((o) =>
    o.planDigest === planDigest && o.machine === node && o.id !== exceptOperation
  );
  let floor: bigint | undefined;
  const raise = (v: bigint) => {
    if (floor === undefined || v > floor) floor = v;
  };
  for (const o of earlier) {
    const detail = await journal.showOperation(o.id);
    if (!detail) continue;
    const accepted = detail.attempts.some((a) =>
      a.phase === CONFIG_PHASE && a.responseClass === "accepted"
    );
    for (const p of detail.phases) {
      if (p.phase !== CONFIG_PHASE || p.kind !== "intent") continue;
      const based = basedOn(p.detail);
      if (based !== undefined) raise(accepted ? based + 1n : based);
    }
  }
  return floor;
}

function basedOn(detail: string): bigint | undefined {
  try {
    const v = (JSON.parse(detail) as { basedOnConfigVersion?: unknown }).basedOnConfigVersion;
    return typeof v === "string" ? configVersionOf(v) : undefined;
  } catch {
    return undefined;
  }
}
