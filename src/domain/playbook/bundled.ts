/**
 * The bundled-versions snapshot: what an upstream artifact carries at a tag, for the companions
 * that ride along unpinned (the Ceph image a rook-ceph-cluster chart defaults to, the cephcsi a
 * rook-ceph operator chart compiles in, the Flux distribution inside flux-operator-manifests).
 * A review reads the companion's version at the base and the head tag from here; a tag the
 * snapshot does not list is "unknown", never "unchanged". Parsed like a plan file (size, aliases,
 * duplicate keys, located problems, `BundledVersionsInvalid`).
 */
import { z } from "../zod.ts";
import type { Problem } from "../errors.ts";
import { plainIssueMessage } from "../plain_issue.ts";
import { located, type PlanIssue } from "../plan/parse.ts";
import { type FieldPath, loadYaml } from "../plan/yaml_load.ts";

const Entry = z.strictObject({
  /** The companion's `version.artifact` key, e.g. `rook-ceph-cluster`. */
  artifact: z.string().min(1).max(200),
  tag: z.string().min(1).max(128),
  version: z.string().min(1).max(128),
  /** Where the version was read (file and field inside the artifact). */
  source: z.string().min(1).max(400),
});

const BundledVersionsSchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("BundledVersions"),
  metadata: z.strictObject({
    name: z.string().min(1).max(120),
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date (YYYY-MM-DD)"),
  }),
  spec: z.strictObject({ entries: z.array(Entry).max(20_000) }),
});

/** A parsed snapshot with its lookup. */
export interface BundledVersions {
  readonly name: string;
  readonly date: string;
  /** The version `artifact` bundles at `tag` (a leading `v` is ignored on the tag). */
  lookup(artifact: string, tag: string): { version: string; source: string } | undefined;
}

/** A snapshot that knows nothing (every companion is then `CompanionVersionUnknown`). */
export const NO_BUNDLED_VERSIONS: BundledVersions = {
  name: "(none)",
  date: "",
  lookup: () => undefined,
};

/** Parses a bundled-versions file; every problem located. */
export function parseBundledVersions(
  bytes: Uint8Array,
  file: string,
): { readonly ok: true; readonly bundled: BundledVersions } | {
  readonly ok: false;
  readonly problems: readonly Problem[];
} {
  const loaded = loadYaml(bytes, { file, maxBytes: 4 * 1024 * 1024 });
  if (!loaded.ok) {
    return {
      ok: false,
      problems: loaded.problems.map((p) => ({ ...p, reason: "BundledVersionsInvalid" })),
    };
  }
  const parsed = BundledVersionsSchema.safeParse(loaded.loaded.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i): PlanIssue => ({
      reason: "BundledVersionsInvalid",
      message: i.code === "unrecognized_keys"
        ? `unknown field "${i.keys[0]}"`
        : plainIssueMessage(i),
      path: i.path as FieldPath,
    }));
    return { ok: false, problems: located(loaded.loaded, issues) };
  }
  const byKey = new Map<string, { version: string; source: string }>();
  const issues: PlanIssue[] = [];
  parsed.data.spec.entries.forEach((e, i) => {
    const key = keyOf(e.artifact, e.tag);
    if (byKey.has(key)) {
      issues.push({
        reason: "BundledVersionsInvalid",
        message: `${e.artifact} ${e.tag} is listed twice`,
        path: ["spec", "entries", i],
      });
    }
    byKey.set(key, { version: e.version, source: e.source });
  });
  if (issues.length > 0) return { ok: false, problems: located(loaded.loaded, issues) };
  return {
    ok: true,
    bundled: {
      name: parsed.data.metadata.name,
      date: parsed.data.metadata.date,
      lookup: (artifact, tag) => byKey.get(keyOf(artifact, tag)),
    },
  };
}

function keyOf(artifact: string, tag: string): string {
  return `${artifact}\u0000${tag.replace(/^v/, "")}`;
}
