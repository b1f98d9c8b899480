/**
 * Playbook file bytes → a schema-valid, cross-checked `Playbook`, every problem located as
 * file:line:column with a Playbook* reason. Hostile input is refused the way plan files are:
 * the size is checked on the bytes before parsing, strict UTF-8, one document, no duplicate
 * keys, alias expansion bounded (the shared `loadYaml`). Pure: the caller reads the files.
 */
import type { Problem } from "../errors.ts";
import { plainIssueMessage } from "../plain_issue.ts";
import type { Reason } from "../reasons.ts";
import { located, type PlanIssue } from "../plan/parse.ts";
import { type FieldPath, loadYaml } from "../plan/yaml_load.ts";
import { type Playbook, PlaybookSchema, type Selector } from "./schema.ts";
import { compileCapture, parseYamlPath } from "./yaml_path.ts";

/** Playbooks are prose-heavy but small; the largest shipped one is well under 32 KiB. */
export const MAX_PLAYBOOK_BYTES = 256 * 1024;

/** Result of {@link parsePlaybook}. */
export type ParsePlaybookResult =
  | { readonly ok: true; readonly playbook: Playbook }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** The plan loader's structural reasons, renamed for playbook files. */
const RENAMED: Partial<Record<Reason, Reason>> = {
  PlanTooLarge: "PlaybookTooLarge",
  PlanEncodingInvalid: "PlaybookSyntaxInvalid",
  PlanSyntaxInvalid: "PlaybookSyntaxInvalid",
  DuplicateKey: "PlaybookSyntaxInvalid",
  MultipleDocuments: "PlaybookSyntaxInvalid",
  AliasBudgetExceeded: "PlaybookAliasBudgetExceeded",
};

/** Parses one playbook file. Never throws for bad input. */
export function parsePlaybook(bytes: Uint8Array, file: string): ParsePlaybookResult {
  const loaded = loadYaml(bytes, { file, maxBytes: MAX_PLAYBOOK_BYTES });
  if (!loaded.ok) {
    return {
      ok: false,
      problems: loaded.problems.map((p) => ({ ...p, reason: RENAMED[p.reason] ?? p.reason })),
    };
  }
  const source = loaded.loaded;
  const parsed = PlaybookSchema.safeParse(source.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i): PlanIssue => {
      if (i.code === "unrecognized_keys") {
        return {
          reason: "PlaybookSchemaInvalid",
          message: `unknown field "${i.keys[0]}"`,
          path: i.path as FieldPath,
          key: String(i.keys[0]),
        };
      }
      return {
        reason: "PlaybookSchemaInvalid",
        message: plainIssueMessage(i),
        path: i.path as FieldPath,
      };
    });
    return { ok: false, problems: located(source, issues) };
  }
  const issues = crossCheck(parsed.data);
  if (issues.length > 0) return { ok: false, problems: located(source, issues) };
  return { ok: true, playbook: parsed.data };
}

/** Parses a whole set: every file valid, names equal file names, no name twice. */
export function parsePlaybookSet(
  files: readonly { readonly file: string; readonly bytes: Uint8Array }[],
): { readonly ok: true; readonly playbooks: readonly Playbook[] } | {
  readonly ok: false;
  readonly problems: readonly Problem[];
} {
  const problems: Problem[] = [];
  const playbooks: Playbook[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const r = parsePlaybook(f.bytes, f.file);
    if (!r.ok) {
      problems.push(...r.problems);
      continue;
    }
    const name = r.playbook.metadata.name;
    const base = f.file.replace(/^.*\//, "").replace(/\.ya?ml$/, "");
    if (base !== name) {
      problems.push(setProblem(
        f.file,
        `metadata.name is "${name}" but the file is named "${base}"`,
      ));
    }
    const other = seen.get(name);
    if (other !== undefined) {
      problems.push(setProblem(f.file, `playbook "${name}" is also defined by ${other}`));
    }
    seen.set(name, f.file);
    playbooks.push(r.playbook);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, playbooks: playbooks.sort((a, b) => cmp(a.metadata.name, b.metadata.name)) };
}

function setProblem(file: string, message: string): Problem {
  return {
    reason: "PlaybookSetInvalid",
    message,
    location: { file, line: 1, column: 1, path: "metadata.name" },
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rules zod cannot express: unique ids, references that resolve, selectors that compile. */
function crossCheck(p: Playbook): PlanIssue[] {
  const out: PlanIssue[] = [];
  const bad = (message: string, path: FieldPath) =>
    out.push({ reason: "PlaybookSemanticInvalid", message, path });
  const unique = (ids: readonly string[], at: (i: number) => FieldPath, what: string) => {
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      if (seen.has(id)) bad(`${what} id "${id}" is used twice`, at(i));
      seen.add(id);
    });
  };
  const s = p.spec;
  unique(s.pinSets.map((x) => x.id), (i) => ["spec", "pinSets", i, "id"], "pin set");
  s.pinSets.forEach((set, si) => {
    unique(set.pins.map((x) => x.id), (i) => ["spec", "pinSets", si, "pins", i, "id"], "pin");
    set.pins.forEach((pin, i) =>
      checkSelector(pin.select, ["spec", "pinSets", si, "pins", i, "select"], bad)
    );
  });
  unique(s.deviations.map((x) => x.id), (i) => ["spec", "deviations", i, "id"], "deviation");
  s.deviations.forEach((d, i) => {
    checkSelector(d.select, ["spec", "deviations", i, "select"], bad);
    const hasExpected = d.expected !== undefined && d.expected !== null;
    if ([hasExpected, d.absent === true, d.present === true].filter((x) => x).length !== 1) {
      bad("a deviation has exactly one of expected, absent and present", ["spec", "deviations", i]);
    }
  });
  unique(s.companions.map((x) => x.id), (i) => ["spec", "companions", i, "id"], "companion");
  const pinRefs = new Set(s.pinSets.flatMap((set) => set.pins.map((pin) => `${set.id}.${pin.id}`)));
  s.companions.forEach((c, i) => {
    if (!pinRefs.has(c.ridesOn)) {
      bad(`ridesOn "${c.ridesOn}" names no pin of this playbook`, [
        "spec",
        "companions",
        i,
        "ridesOn",
      ]);
    }
    if (c.version.override) {
      checkSelector(c.version.override.select, [
        "spec",
        "companions",
        i,
        "version",
        "override",
        "select",
      ], bad);
    }
  });
  const setIds = new Set(s.pinSets.map((x) => x.id));
  unique(s.companionEdits.map((x) => x.id), (i) => ["spec", "companionEdits", i, "id"], "edit");
  s.companionEdits.forEach((e, i) => {
    if (!setIds.has(e.when.pinSet)) {
      bad(`pin set "${e.when.pinSet}" is not defined`, [
        "spec",
        "companionEdits",
        i,
        "when",
        "pinSet",
      ]);
    }
    checkSelector(e.select, ["spec", "companionEdits", i, "select"], bad);
  });
  const checkIds = new Set(s.afterMerge.map((x) => x.id));
  unique(s.afterMerge.map((x) => x.id), (i) => ["spec", "afterMerge", i, "id"], "check");
  unique(
    s.breakingPatterns.map((x) => x.id),
    (i) => ["spec", "breakingPatterns", i, "id"],
    "pattern",
  );
  const known = {
    deviation: new Set(s.deviations.map((x) => x.id)),
    companion: new Set(s.companions.map((x) => x.id)),
    pinSet: setIds,
    companionEdit: new Set(s.companionEdits.map((x) => x.id)),
  };
  s.breakingPatterns.forEach((b, i) => {
    const here: FieldPath = ["spec", "breakingPatterns", i];
    if (b.detectedBy) {
      const [kind, id] = Object.entries(b.detectedBy)[0] as [keyof typeof known, string];
      if (!known[kind].has(id)) {
        bad(`${kind} "${id}" is not defined`, [...here, "detectedBy", kind]);
      }
      if (b.detection !== "preflight") {
        bad("detectedBy names a review finding; detection must be preflight", [
          ...here,
          "detection",
        ]);
      }
    }
    if (b.check !== undefined && !checkIds.has(b.check)) {
      bad(`after-merge check "${b.check}" is not defined`, [...here, "check"]);
    }
  });
  s.rollback.forEach((r, i) => {
    if (r.kind === "one-way" && r.scope === undefined) {
      bad("a one-way caveat names its scope (patch, minor or major)", ["spec", "rollback", i]);
    }
    if (r.pinSet !== undefined && !setIds.has(r.pinSet)) {
      bad(`pin set "${r.pinSet}" is not defined`, ["spec", "rollback", i, "pinSet"]);
    }
    if (r.companion !== undefined && !known.companion.has(r.companion)) {
      bad(`companion "${r.companion}" is not defined`, ["spec", "rollback", i, "companion"]);
    }
    if (r.pinSet !== undefined && r.companion !== undefined) {
      bad("a caveat is about a pin set or a companion, not both", ["spec", "rollback", i]);
    }
  });
  return out;
}

function checkSelector(
  sel: Selector,
  path: FieldPath,
  bad: (message: string, path: FieldPath) => void,
): void {
  if ("yaml" in sel) {
    const steps = parseYamlPath(sel.yaml);
    if (typeof steps === "string") bad(`YAML path: ${steps}`, [...path, "yaml"]);
    if (sel.capture !== undefined) {
      const re = compileCapture(sel.capture);
      if (typeof re === "string") bad(re, [...path, "capture"]);
    }
  } else {
    const re = compileCapture(sel.pattern);
    if (typeof re === "string") bad(re, [...path, "pattern"]);
  }
}
