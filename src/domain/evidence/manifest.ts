/**
 * The evidence manifest: pinned upstream files (`{repo, revision, path, sha256}` tuples), named
 * assertions over those files, and controls that must fail. Parsing is strict (unknown fields
 * are refused) and every problem carries `file:line:column`, as for plan files.
 */
import { z } from "../zod.ts";
import type { Document, LineCounter } from "yaml";
import { generalYaml, lazyDocument } from "../yaml_general.ts";
import { CONTROL_CHARACTER, fastLoadPlainYaml } from "../plan/yaml_fast.ts";
import type { Problem, SourceLocation } from "../errors.ts";
import type { Reason } from "../reasons.ts";
import { repoUrlProblem } from "./repo_url.ts";
import { isAliasBudgetError } from "../yaml_error_summary.ts";

const HEX40 = /^[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** A relative path without `..`, absolute or empty segments: it becomes a cache path. */
const safePath = z.string().min(1).refine(
  (p) => !p.startsWith("/") && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."),
  "path must be relative, without '.', '..' or empty segments",
);

const sourceSchema = z.strictObject({
  id: z.string().regex(NAME, "id must be lower-case letters, digits, '.', '_' or '-'"),
  repo: z.string().min(1),
  revision: z.string().regex(HEX40, "revision must be a full 40-hex commit id"),
  /** Human label for the revision (a tag); never used for fetching. */
  ref: z.string().min(1).optional(),
  path: safePath,
  sha256: z.string().regex(HEX64, "sha256 must be 64 lower-case hex digits"),
});

const orderSchema = z.strictObject({
  name: z.string().regex(NAME),
  kind: z.literal("order"),
  source: z.string(),
  function: z.string().regex(/^[A-Za-z_$][\w$]*$/),
  calls: z.array(z.string().regex(/^[A-Za-z_$][\w$.]*$/)).min(2),
});

const independentSchema = z.strictObject({
  name: z.string().regex(NAME),
  kind: z.literal("independent"),
  source: z.string(),
  function: z.string().regex(/^[A-Za-z_$][\w$]*$/),
  option: z.string().regex(/^[A-Za-z_$][\w$.]*$/),
  flag: z.string().regex(/^[A-Za-z_$][\w$]*$/),
});

const containsSchema = z.strictObject({
  name: z.string().regex(NAME),
  kind: z.literal("contains"),
  source: z.string(),
  text: z.string().min(1),
});

const assertionSchema = z.discriminatedUnion("kind", [
  orderSchema,
  independentSchema,
  containsSchema,
]);

const reversedOrderControl = z.strictObject({
  name: z.string().regex(NAME),
  kind: z.literal("reversed-order"),
  /** The `order` assertion whose checker the control exercises. */
  assertion: z.string(),
  /** The synthetic call order; defaults to the assertion's calls reversed. */
  calls: z.array(z.string().regex(/^[A-Za-z_$][\w$.]*$/)).min(2).optional(),
  expect: z.literal("fail"),
});

const corruptedCacheControl = z.strictObject({
  name: z.string().regex(NAME),
  kind: z.literal("corrupted-cache"),
  source: z.string(),
  expect: z.literal("fail"),
});

const controlSchema = z.discriminatedUnion("kind", [reversedOrderControl, corruptedCacheControl]);

/** Zod schema of an evidence manifest (`kind: EvidenceManifest`). */
export const EvidenceManifestSchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("EvidenceManifest"),
  metadata: z.strictObject({ name: z.string().regex(NAME), description: z.string().optional() }),
  sources: z.array(sourceSchema).min(1),
  assertions: z.array(assertionSchema).default([]),
  controls: z.array(controlSchema).default([]),
});

/** A parsed, validated evidence manifest. */
export type EvidenceManifest = z.infer<typeof EvidenceManifestSchema>;
/** One pinned `{repo, revision, path, sha256}` tuple with its id. */
export type EvidenceSource = EvidenceManifest["sources"][number];
/** One named assertion over pinned files. */
export type EvidenceAssertion = EvidenceManifest["assertions"][number];
/** One control that must fail. */
export type EvidenceControl = EvidenceManifest["controls"][number];

/** Result of parsing a manifest: the manifest, or located problems. */
export type ManifestParse =
  | { readonly ok: true; readonly manifest: EvidenceManifest }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Largest manifest parsed (and read, by the CLI). */
export const MAX_MANIFEST_BYTES = 256 * 1024;

/**
 * Parses and validates an evidence manifest; problems carry reason `EvidenceManifestInvalid`
 * and the location of the offending node.
 *
 * @example
 * ```ts
 * import { parseEvidenceManifest } from "./manifest.ts";
 * const r = parseEvidenceManifest("kind: Nope\n", "m.yaml");
 * r.ok; // false
 * ```
 */
export function parseEvidenceManifest(text: string, file: string): ManifestParse {
  const at = (line: number, column: number, path?: string): SourceLocation =>
    path === undefined ? { file, line, column } : { file, line, column, path };
  if (text.length > MAX_MANIFEST_BYTES) {
    return fail(`manifest exceeds ${MAX_MANIFEST_BYTES} bytes`, at(1, 1));
  }
  // A manifest in plain YAML (yaml_fast.ts: the value the general parser would give, no error)
  // is read without the general parser; its document is parsed only to locate a problem.
  const fast = CONTROL_CHARACTER.test(text) ? undefined : fastLoadPlainYaml(text);
  const parsedText = lazyDocument(text, { prettyErrors: false });
  const where = (path: (string | number)[]) => locate(parsedText().doc, parsedText().lc, path);
  let raw: unknown = fast;
  if (fast === undefined) {
    const { doc } = parsedText();
    if (doc.errors.length > 0) {
      return {
        ok: false,
        problems: doc.errors.map((e) => {
          const pos = e.linePos?.[0] ?? { line: 1, col: 1 };
          return problem(e.message.split("\n")[0] ?? e.code, at(pos.line, pos.col));
        }),
      };
    }
    try {
      raw = doc.toJS({ maxAliasCount: 50 });
    } catch (e) {
      // The alias budget throws (a "billion laughs" manifest): a problem, never an exception.
      const why = isAliasBudgetError(e)
        ? "YAML aliases expand beyond the allowed budget"
        : `not valid YAML: ${e instanceof Error ? e.message : String(e)}`;
      return fail(why, at(1, 1));
    }
  }
  const parsed = EvidenceManifestSchema.safeParse(raw);
  if (parsed.success) return crossCheck(parsed.data, where, file);
  return {
    ok: false,
    problems: parsed.error.issues.map((iss) => {
      const path = iss.path.map((p) => (typeof p === "symbol" ? String(p) : p));
      const pos = where(path);
      return problem(iss.message, at(pos.line, pos.col, formatPath(path)));
    }),
  };
}

/** References between sections must resolve; ids and names must be unique. */
function crossCheck(
  m: EvidenceManifest,
  where: (path: (string | number)[]) => { line: number; col: number },
  file: string,
): ManifestParse {
  const problems: Problem[] = [];
  const report = (
    message: string,
    path: (string | number)[],
    reason: Reason = "EvidenceManifestInvalid",
  ) => {
    const pos = where(path);
    problems.push(
      problem(message, { file, line: pos.line, column: pos.col, path: formatPath(path) }, reason),
    );
  };
  const ids = new Set<string>();
  m.sources.forEach((s, i) => {
    if (ids.has(s.id)) report(`source id '${s.id}' is repeated`, ["sources", i, "id"]);
    ids.add(s.id);
    // The repo reaches git's command line: refuse anything git or ssh could read as an option
    // or a program to run, before anything is fetched.
    const why = repoUrlProblem(s.repo);
    if (why) {
      const shown = JSON.stringify(s.repo.length > 120 ? `${s.repo.slice(0, 120)}…` : s.repo);
      report(`repo ${shown} ${why}`, ["sources", i, "repo"], "EvidenceRepoUrlInvalid");
    }
  });
  const names = new Set<string>();
  m.assertions.forEach((a, i) => {
    if (names.has(a.name)) report(`assertion '${a.name}' is repeated`, ["assertions", i, "name"]);
    names.add(a.name);
    if (!ids.has(a.source)) report(`unknown source '${a.source}'`, ["assertions", i, "source"]);
  });
  m.controls.forEach((c, i) => {
    if (c.kind === "corrupted-cache" && !ids.has(c.source)) {
      report(`unknown source '${c.source}'`, ["controls", i, "source"]);
    }
    if (c.kind === "reversed-order") {
      const target = m.assertions.find((a) => a.name === c.assertion);
      if (target?.kind !== "order") {
        report(`'${c.assertion}' is not an order assertion`, ["controls", i, "assertion"]);
      }
    }
  });
  return problems.length === 0 ? { ok: true, manifest: m } : { ok: false, problems };
}

function locate(
  doc: Document.Parsed,
  lc: LineCounter,
  path: (string | number)[],
): { line: number; col: number } {
  const { isMap } = generalYaml();
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | null)?.range;
    if (range && (n > 0 || isMap(node))) return lc.linePos(range[0]);
  }
  return { line: 1, col: 1 };
}

function formatPath(path: (string | number)[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`).join("");
}

function problem(
  message: string,
  location: SourceLocation,
  reason: Reason = "EvidenceManifestInvalid",
): Problem {
  return { reason, message, location };
}

function fail(message: string, location: SourceLocation): ManifestParse {
  return { ok: false, problems: [problem(message, location)] };
}
