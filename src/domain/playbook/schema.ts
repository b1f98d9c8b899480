/**
 * The schema of an upgrade playbook: what cairn knows about one protected component of a
 * home-ops GitOps repository (how its bump arrives, which pins move together, which deliberate
 * deviations a blind revert drops, which second component rides along, what to read, what has
 * broken before, what to check after merge, where rollback is one way). One file per component
 * under `playbooks/`; `load.ts` parses it with located errors.
 *
 * Selectors name a value inside a file of the GitOps repository: a YAML path (optionally inside
 * the document of a given kind/name, optionally narrowed by a capture pattern) or, for files that
 * are not YAML (`.mise.toml`, a URL baked into a command), a pattern with one capture group.
 */
import { z } from "../zod.ts";
import { BindingSchema } from "../health/policy_schema.ts";

/** Identifiers inside a playbook (pin, deviation, companion ids): lower-case kebab. */
export const PlaybookId = z.string().regex(
  /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
  "must be lower-case letters, digits and '-' (at most 63)",
);

/** A repository-relative path: no leading '/', no '..', '.' or empty segments, no backslash. */
export const RepoPath = z.string().min(1).max(300).refine(
  (p) =>
    !p.startsWith("/") && !p.includes("\\") &&
    // deno-lint-ignore no-control-regex
    !/[\u0000-\u001f\u007f]/.test(p) &&
    p.replace(/\/$/, "").split("/").every((s) => s !== "" && s !== "." && s !== ".."),
  "must be a repository-relative path (no leading '/', no '..', '.' or empty segments)",
);

/** A regular expression source with at least one capture group, compiled at load. */
const CapturePattern = z.string().min(1).max(400);

/** A value inside a YAML file: dotted path, `[n]` for list items, `["a.b"]` for dotted keys. */
const YamlSelector = z.strictObject({
  yaml: z.string().min(1).max(300),
  /** In a multi-document file, the document with this kind (and name). */
  document: z.strictObject({
    kind: z.string().min(1).max(100),
    name: z.string().min(1).max(253).optional(),
  }).optional(),
  /** Narrows a scalar to the first capture group (a tag inside an OCI URL). */
  capture: CapturePattern.optional(),
});

/** A value in a non-YAML file: the first match's first capture group, on its line. */
const PatternSelector = z.strictObject({ pattern: CapturePattern });

export const Selector = z.union([YamlSelector, PatternSelector]);
export type Selector = z.infer<typeof Selector>;

/** One pinned version in one file. */
const Pin = z.strictObject({
  id: PlaybookId,
  file: RepoPath,
  select: Selector,
  /** Why this pin exists (who reads it). */
  summary: z.string().min(1).max(400),
});
export type Pin = z.infer<typeof Pin>;

/** Pins that must carry the same version after a bump: moving some of them is a finding. */
const PinSet = z.strictObject({
  id: PlaybookId,
  summary: z.string().min(1).max(600),
  pins: z.array(Pin).min(1).max(16),
  /**
   * True (the default) when every pin holds the same version; false when the pins are different
   * artifacts that move together (operator and cluster charts of one release line).
   */
  sameVersion: z.boolean().default(true),
});
export type PinSet = z.infer<typeof PinSet>;

/** A deliberate deviation a blind revert or a regenerated values file would drop. */
const Deviation = z.strictObject({
  id: PlaybookId,
  file: RepoPath,
  select: Selector,
  /**
   * The value that must be there. A scalar is compared as text ("0.3" and 0.3 agree); a mapping
   * must hold every key given (recursively); a list must hold an item matching each item given.
   * Exactly one of `expected`, `absent` and `present`.
   */
  expected: z.unknown().optional(),
  /** The deviation is a removal: the selected value must not be there. */
  absent: z.literal(true).optional(),
  /** The deviation is that the value exists, whatever it is (a fixed address, a PDB). */
  present: z.literal(true).optional(),
  why: z.string().min(1).max(600),
});
export type Deviation = z.infer<typeof Deviation>;

/** How to read the version of a component that rides along unpinned. */
const CompanionVersion = z.strictObject({
  /**
   * The bundled-versions snapshot key: the version this artifact bundles at a given tag
   * (`bundled.ts`), e.g. the Ceph image a Rook cluster chart defaults to.
   */
  artifact: z.string().min(1).max(200),
  /** Where inside the artifact the version lives (for the human reading the report). */
  where: z.string().min(1).max(300),
  /** When the repository pins the companion itself, that pin wins over the bundled default. */
  override: z.strictObject({ file: RepoPath, select: Selector }).optional(),
});

/** A second component carried by a pin of this one (a two-component upgrade in disguise). */
const Companion = z.strictObject({
  id: PlaybookId,
  title: z.string().min(1).max(120),
  /** `pinSet.pin` whose move carries this companion. */
  ridesOn: z.string().regex(/^[a-z0-9-]+\.[a-z0-9-]+$/, "must be pinSetId.pinId"),
  version: CompanionVersion,
  /** Which moves of the companion cannot be rolled back with the chart. */
  oneWay: z.enum(["major", "minor", "none"]),
  /** How far one upgrade may move it (Ceph: exactly one major). */
  maxMajorStep: z.number().int().min(1).max(9).optional(),
  readBeforeMerge: z.string().min(1).max(600),
});
export type Companion = z.infer<typeof Companion>;

/** A file edit that must ride in the same change when a pin set moves by at least `moves`. */
const CompanionEdit = z.strictObject({
  id: PlaybookId,
  when: z.strictObject({
    pinSet: PlaybookId,
    moves: z.enum(["patch", "minor", "major"]),
  }),
  file: RepoPath,
  select: Selector,
  why: z.string().min(1).max(600),
});
export type CompanionEdit = z.infer<typeof CompanionEdit>;

const Link = z.strictObject({
  title: z.string().min(1).max(200),
  url: z.string().regex(/^https:\/\/[^\s<>"`]{1,400}$/, "must be an https URL").optional(),
  note: z.string().min(1).max(600).optional(),
});

/** What a review detection points at: the finding that reveals the pattern before merge. */
const DetectedBy = z.union([
  z.strictObject({ deviation: PlaybookId }),
  z.strictObject({ companion: PlaybookId }),
  z.strictObject({ pinSet: PlaybookId }),
  z.strictObject({ companionEdit: PlaybookId }),
]);

const BreakingPattern = z.strictObject({
  id: PlaybookId,
  pattern: z.string().min(1).max(800),
  /**
   * `preflight`: visible before merge (in the diff or the release notes); `after-merge`: only the
   * running cluster shows it.
   */
  detection: z.enum(["preflight", "after-merge"]),
  /** The review finding that reveals it, when the diff can. */
  detectedBy: DetectedBy.optional(),
  /** The after-merge check (by id) that reveals it, when a reader can. */
  check: PlaybookId.optional(),
  action: z.string().min(1).max(800),
});
export type BreakingPattern = z.infer<typeof BreakingPattern>;

/**
 * Health readers an after-merge check may name. `manual` is a check cairn cannot make (a human
 * runs it; the report says so instead of counting it as passed). The names beyond the existing
 * policy readers are implemented with the ComponentUpgrade execution.
 */
export const AFTER_MERGE_READERS: readonly string[] = [
  "manual",
  // Every reader of the health policy (domain/health/policy_schema.ts), as it names them.
  ...BindingSchema.options.map((o) => o.shape.reader.value as string),
  // Readers of the ComponentUpgrade observation (Flux delivery, rendered images, operators).
  "flux-source",
  "flux-kustomization",
  "flux-helmrelease",
  "workload-images",
  "ceph-health",
  "cnpg-cluster",
];

const AfterMergeCheck = z.strictObject({
  id: PlaybookId,
  reader: z.string().refine(
    (r) => AFTER_MERGE_READERS.includes(r),
    "not a health reader cairn knows (or manual)",
  ),
  summary: z.string().min(1).max(600),
  /** Reader parameters (namespace, name, selector, image …), all strings. */
  params: z.record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9]{0,40}$/), z.string().max(400))
    .optional(),
});
export type AfterMergeCheck = z.infer<typeof AfterMergeCheck>;

const RollbackCaveat = z.strictObject({
  kind: z.enum(["one-way", "re-pin-not-revert", "companion-pin", "fix-forward", "note"]),
  /** For `one-way`: which move cannot be undone. */
  scope: z.enum(["patch", "minor", "major"]).optional(),
  /** For `one-way`: the pin set it is about (default: every pin set of the component). */
  pinSet: PlaybookId.optional(),
  /** For `one-way`: the riding companion it is about instead of a pin set. */
  companion: PlaybookId.optional(),
  text: z.string().min(1).max(800),
});
export type RollbackCaveat = z.infer<typeof RollbackCaveat>;

export const PlaybookSchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("Playbook"),
  metadata: z.strictObject({
    name: PlaybookId,
    title: z.string().min(1).max(120),
  }),
  spec: z.strictObject({
    arrivesAs: z.strictObject({
      renovateGroups: z.array(z.string().min(1).max(120)).min(1).max(8),
      datasources: z.array(z.string().min(1).max(120)).min(1).max(8),
      summary: z.string().min(1).max(800),
    }),
    /** Directory or file prefixes the component owns: a change under them touches it. */
    paths: z.array(RepoPath).min(1).max(32),
    pinSets: z.array(PinSet).min(1).max(8),
    deviations: z.array(Deviation).max(32).default([]),
    companions: z.array(Companion).max(8).default([]),
    companionEdits: z.array(CompanionEdit).max(8).default([]),
    readBeforeMerge: z.array(Link).min(1).max(16),
    breakingPatterns: z.array(BreakingPattern).max(16).default([]),
    afterMerge: z.array(AfterMergeCheck).min(1).max(24),
    rollback: z.array(RollbackCaveat).min(1).max(12),
  }),
});

/** A schema-valid playbook. */
export type Playbook = z.infer<typeof PlaybookSchema>;
