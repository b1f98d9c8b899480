/**
 * Where a pinned source's bytes came from. A hash match says the bytes are the pinned ones; it
 * does not say they came from the upstream the manifest names. Every source row of a report
 * therefore carries its provenance: fetched from the named repository, fetched through a git URL
 * rewrite from a mirror or from a local stand-in (the demo's local upstream repositories), or read
 * from a cache entry whose origin was never recorded. Pure.
 */

/** The provenance of one cached source. */
export type SourceProvenance =
  /** Fetched from the manifest's repository URL itself. */
  | { readonly kind: "fetched"; readonly repository: string; readonly revision: string }
  /** A URL rewrite sent the fetch to another remote repository. */
  | {
    readonly kind: "mirror";
    readonly repository: string;
    readonly revision: string;
    readonly fetchedFrom: string;
  }
  /** A URL rewrite sent the fetch to a repository on this machine, standing in for the upstream. */
  | { readonly kind: "local-stand-in"; readonly repository: string; readonly revision: string }
  /** A cache entry with no recorded origin (filled by hand or by an older cairn). */
  | { readonly kind: "unrecorded" };

/** A location git resolves on this machine (a path or a `file:` URL), not over the network. */
function isLocal(url: string): boolean {
  return url.startsWith("/") || url.startsWith("./") || url.startsWith("../") ||
    /^file:/i.test(url) || /^[A-Za-z]:[\\/]/.test(url);
}

/**
 * Classifies a fetch by the URL git actually fetched from (`git ls-remote --get-url`, which
 * applies `insteadOf` rewrites) against the repository the manifest names.
 */
export function classifyFetch(
  repository: string,
  revision: string,
  fetchedFrom: string,
): SourceProvenance {
  if (fetchedFrom === repository) return { kind: "fetched", repository, revision };
  if (isLocal(fetchedFrom)) return { kind: "local-stand-in", repository, revision };
  return { kind: "mirror", repository, revision, fetchedFrom };
}

/** One line for a report row. Local paths are never printed (they are this machine's). */
export function provenanceText(p: SourceProvenance): string {
  switch (p.kind) {
    case "fetched":
      return `fetched from ${p.repository}@${p.revision} into the evidence cache`;
    case "mirror":
      return `fetched from ${p.fetchedFrom}@${p.revision}, a mirror of ${p.repository}`;
    case "local-stand-in":
      return `local stand-in: a repository on this machine replaced ${p.repository}@${p.revision}`;
    case "unrecorded":
      return "cache entry; where its bytes came from was not recorded";
  }
}

/** Reads a recorded provenance; anything unrecognised is `unrecorded`, never `fetched`. */
export function parseProvenance(raw: unknown): SourceProvenance {
  if (typeof raw !== "object" || raw === null) return { kind: "unrecorded" };
  const r = raw as Record<string, unknown>;
  const repository = typeof r["repository"] === "string" ? r["repository"] : undefined;
  const revision = typeof r["revision"] === "string" ? r["revision"] : undefined;
  if (repository === undefined || revision === undefined) return { kind: "unrecorded" };
  if (r["kind"] === "fetched") return { kind: "fetched", repository, revision };
  if (r["kind"] === "local-stand-in") return { kind: "local-stand-in", repository, revision };
  if (r["kind"] === "mirror" && typeof r["fetchedFrom"] === "string") {
    return { kind: "mirror", repository, revision, fetchedFrom: r["fetchedFrom"] };
  }
  return { kind: "unrecorded" };
}

/**
 * The summary of a source table's provenance, e.g. "; the bytes came from 3 local stand-ins, not
 * from the named upstreams" — empty when every source was fetched from its named upstream.
 */
export function provenanceSummary(kinds: readonly SourceProvenance["kind"][]): string {
  const n = (k: SourceProvenance["kind"]) => kinds.filter((x) => x === k).length;
  if (n("fetched") === kinds.length) return "";
  const parts = [
    n("fetched") ? `${n("fetched")} fetched from their named upstream` : "",
    n("local-stand-in") ? `${n("local-stand-in")} from local stand-ins` : "",
    n("mirror") ? `${n("mirror")} from mirrors` : "",
    n("unrecorded") ? `${n("unrecorded")} from cache entries of unrecorded origin` : "",
  ].filter(Boolean);
  const upstream = n("fetched") === 0 ? ", none from the named upstreams" : "";
  return `; the bytes came: ${parts.join(", ")}${upstream}`;
}
