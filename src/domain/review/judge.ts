/**
 * The review of a bump, decided on file contents alone: which protected components the change
 * touches (a changed path under a playbook's paths), which pins moved, and the findings —
 * partial pin-set moves, pins that disagree, dropped deviations, companions riding along (read
 * at both tags from the bundled-versions snapshot or the repository's own pin), missing
 * companion edits, rollbacks across a one-way boundary, files that could not be read. Absence
 * of evidence concludes nothing: an unreadable value is its own finding, never "unchanged".
 * Pure: the caller reads the files (`engine/review/review_branch.ts`).
 */
import type { BundledVersions } from "../playbook/bundled.ts";
import type { Playbook } from "../playbook/schema.ts";
import { classifyMove, norm, RANK } from "./move.ts";
import {
  type FileSnapshot,
  read,
  type Reading,
  selectorText,
  shorten,
  shown,
  whereOf,
} from "./reading.ts";
import { holds } from "../playbook/select.ts";
import type { Reason } from "../reasons.ts";
import type {
  ComponentReview,
  JudgedValue,
  PatternStatus,
  PinSetMove,
  ReviewFinding,
  ReviewResult,
  Severity,
  Side,
  Where,
} from "./model.ts";

export type { FileContent, FileSnapshot } from "./reading.ts";

export interface ReviewInput {
  readonly playbooks: readonly Playbook[];
  readonly bundled: BundledVersions;
  /** Paths that differ between base and head (added, modified, deleted, renamed: both names). */
  readonly changed: readonly string[];
  readonly base: FileSnapshot;
  readonly head: FileSnapshot;
}

/** True when `path` is under one of the playbook's paths or is a file it names. */
export function owns(p: Playbook, path: string): boolean {
  return p.spec.paths.some((prefix) =>
    prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix
  ) || namedFiles(p).has(path);
}

/** Every file a playbook's selectors read. */
export function namedFiles(p: Playbook): ReadonlySet<string> {
  const s = p.spec;
  return new Set([
    ...s.pinSets.flatMap((set) => set.pins.map((pin) => pin.file)),
    ...s.deviations.map((d) => d.file),
    ...s.companions.flatMap((c) => c.version.override ? [c.version.override.file] : []),
    ...s.companionEdits.map((e) => e.file),
  ]);
}

/** The playbooks a change touches. */
export function touchedPlaybooks(
  playbooks: readonly Playbook[],
  changed: readonly string[],
): Playbook[] {
  return playbooks.filter((p) => changed.some((c) => owns(p, c)));
}

/** The files to read (on both sides) to review `changed`. */
export function filesToRead(playbooks: readonly Playbook[], changed: readonly string[]): string[] {
  return [...new Set(touchedPlaybooks(playbooks, changed).flatMap((p) => [...namedFiles(p)]))]
    .sort();
}

/** Reviews a change. */
export function judgeReview(input: ReviewInput): ReviewResult {
  const touched = touchedPlaybooks(input.playbooks, input.changed);
  const components = touched.map((p) => judgeComponent(p, input));
  const findings = components.flatMap((c) => c.findings);
  const unprotected = input.changed.filter((c) => !input.playbooks.some((p) => owns(p, c)));
  return {
    verdict: touched.length === 0 ? "untouched" : findings.length > 0 ? "findings" : "clean",
    components,
    findings,
    unprotected,
    changedFiles: input.changed.length,
  };
}

function judgeComponent(p: Playbook, input: ReviewInput): ComponentReview {
  const name = p.metadata.name;
  const judged: JudgedValue[] = [];
  const findings: ReviewFinding[] = [];
  const detected = new Set<string>();
  const ran = new Set<string>();
  const note = (subject: string, r: Reading, outcome: string) =>
    judged.push({ subject, ...whereOf(r), value: shown(r), outcome });
  const actionsFor = (kind: "deviation" | "companion" | "pinSet" | "companionEdit", id: string) => {
    ran.add(`${kind}:${id}`);
    return p.spec.breakingPatterns
      .filter((b) => b.detectedBy && (b.detectedBy as Record<string, string>)[kind] === id)
      .map((b) => ({ pattern: b.id, action: b.action }));
  };
  const find = (
    code: Reason,
    severity: Severity,
    message: string,
    where: Where[],
    actions: ReviewFinding["actions"] = [],
  ) => {
    for (const a of actions) detected.add(a.pattern);
    findings.push({ code, component: name, severity, message, where, actions });
  };
  const unreadable = (subject: string, r: Reading) =>
    find(
      "ReviewFileUnreadable",
      "attention",
      `${subject}: ${r.file} on ${r.side}: ${
        r.sel.kind === "found" ? "" : r.sel.why
      }; nothing concluded`,
      [whereOf(r)],
    );

  // --- pin sets -------------------------------------------------------------------------------
  const moves: PinSetMove[] = [];
  const pinReadings = new Map<string, { base: Reading; head: Reading; moved: boolean }>();
  for (const set of p.spec.pinSets) {
    const rows = set.pins.map((pin) => {
      const subject = `pin ${set.id}/${pin.id}`;
      const base = read(input.base, "base", pin.file, pin.select);
      const head = read(input.head, "head", pin.file, pin.select);
      const bothFound = base.sel.kind === "found" && head.sel.kind === "found";
      const moved = bothFound && norm(base.sel.text ?? "") !== norm(head.sel.text ?? "");
      note(subject, base, "before");
      note(subject, head, moved ? "moved" : bothFound ? "unchanged" : "not read");
      pinReadings.set(`${set.id}.${pin.id}`, { base, head, moved });
      return { pin, subject, base, head, moved, bothFound };
    });
    for (const r of rows) {
      if (r.bothFound) continue;
      // A pin that exists on neither side is a repository without that pin; one side only is a
      // change that removed or added it; both are reported, never read as "unchanged".
      for (const side of [r.base, r.head]) {
        if (side.sel.kind !== "found") unreadable(r.subject, side);
      }
    }
    const movedRows = rows.filter((r) => r.moved);
    if (movedRows.length === 0) continue;
    const first = movedRows[0]!;
    const from = (first.base.sel as { text?: string }).text ?? "";
    const to = (first.head.sel as { text?: string }).text ?? "";
    const move = classifyMove(from, to);
    moves.push({
      pinSet: set.id,
      from,
      to,
      kind: move.kind,
      moved: movedRows.length,
      of: set.pins.length,
    });
    const stayed = rows.filter((r) => r.bothFound && !r.moved);
    const actions = actionsFor("pinSet", set.id);
    if (stayed.length > 0) {
      find(
        "PinSetPartial",
        "blocking",
        `${movedRows.length} of ${set.pins.length} pins of ${set.id} moved ${from} → ${to}; ` +
          `still on the old version: ${
            stayed.map((r) => `${r.pin.id} (${r.pin.file})`).join(", ")
          }. ` +
          set.summary,
        [...movedRows.map((r) => whereOf(r.head)), ...stayed.map((r) => whereOf(r.head))],
        actions,
      );
    } else if (set.sameVersion) {
      const distinct = new Set(
        movedRows.map((r) => norm((r.head.sel as { text?: string }).text ?? "")),
      );
      if (distinct.size > 1) {
        find(
          "PinSetDisagrees",
          "blocking",
          `the pins of ${set.id} now carry different versions: ${
            movedRows.map((r) => `${r.pin.id}=${(r.head.sel as { text?: string }).text}`).join(", ")
          }`,
          movedRows.map((r) => whereOf(r.head)),
          actions,
        );
      }
    }
    if (move.kind === "downgrade") {
      for (const c of p.spec.rollback) {
        if (c.kind !== "one-way" || !c.scope || c.companion !== undefined) continue;
        if (c.pinSet !== undefined && c.pinSet !== set.id) continue;
        if (RANK[move.level!] < RANK[c.scope]) continue;
        find(
          "RollbackAcrossOneWay",
          "blocking",
          `${set.id} goes back ${from} → ${to} across a ${move.level} boundary: ${c.text}`,
          movedRows.map((r) => whereOf(r.head)),
        );
      }
    }
  }

  // --- deviations -----------------------------------------------------------------------------
  for (const d of p.spec.deviations) {
    const subject = `deviation ${d.id}`;
    const base = read(input.base, "base", d.file, d.select);
    const head = read(input.head, "head", d.file, d.select);
    const kept = (r: Reading): boolean | undefined => {
      if (r.sel.kind === "unreadable") return undefined;
      if (d.absent) return r.sel.kind === "absent";
      if (d.present) return r.sel.kind === "found";
      return r.sel.kind === "found" && holds(r.sel.value, d.expected);
    };
    const inBase = kept(base), inHead = kept(head);
    const want = d.absent ? "absent" : d.present ? "set" : shorten(d.expected);
    note(subject, base, inBase === undefined ? "not read" : inBase ? "holds" : `lacks ${want}`);
    note(subject, head, inHead === undefined ? "not read" : inHead ? "holds" : `lacks ${want}`);
    const actions = actionsFor("deviation", d.id);
    if (inHead === undefined) {
      unreadable(subject, head);
    } else if (!inHead && inBase !== false) {
      find(
        "DeviationDropped",
        "blocking",
        `${d.file}: ${selectorText(d.select)} should be ${want} but is ${shown(head)} on head` +
          `${inBase === undefined ? " (base unreadable)" : ` (base: ${shown(base)})`}. ${d.why}`,
        [whereOf(head), whereOf(base)],
        actions,
      );
    } else if (!inHead) {
      find(
        "DeviationMissing",
        "attention",
        `${d.file}: ${selectorText(d.select)} should be ${want}; it is ${
          shown(head)
        } on both commits. ${d.why}`,
        [whereOf(head)],
        actions,
      );
    }
  }

  // --- companions ---------------------------------------------------------------------------------
  for (const c of p.spec.companions) {
    const pin = pinReadings.get(c.ridesOn);
    const actions = actionsFor("companion", c.id);
    if (!pin || !pin.moved) continue;
    const versionOn = (
      side: Side,
      pinRead: Reading,
    ): { version: string; from: string; where: Where } | undefined => {
      if (c.version.override) {
        const o = read(
          side === "base" ? input.base : input.head,
          side,
          c.version.override.file,
          c.version.override.select,
        );
        note(
          `companion ${c.id} (repository pin)`,
          o,
          o.sel.kind === "found" ? "pinned" : "not pinned",
        );
        if (o.sel.kind === "found" && o.sel.text !== undefined) {
          return { version: o.sel.text, from: `${o.file} (pinned)`, where: whereOf(o) };
        }
      }
      const tag = (pinRead.sel as { text?: string }).text ?? "";
      const hit = input.bundled.lookup(c.version.artifact, tag);
      if (!hit) return undefined;
      return {
        version: hit.version,
        from: `${c.version.artifact} ${tag}: ${hit.source}`,
        where: whereOf(pinRead),
      };
    };
    const b = versionOn("base", pin.base), h = versionOn("head", pin.head);
    const baseTag = (pin.base.sel as { text?: string }).text,
      headTag = (pin.head.sel as { text?: string }).text;
    if (!b || !h) {
      const missing = [
        !b ? `${c.version.artifact} ${baseTag}` : "",
        !h ? `${c.version.artifact} ${headTag}` : "",
      ]
        .filter((x) => x !== "").join(" and ");
      find(
        "CompanionVersionUnknown",
        "attention",
        `${c.title} rides on ${c.ridesOn}; its version at ${missing} is not in the bundled-versions snapshot ` +
          `(${input.bundled.name}): read ${c.version.where}. ${c.readBeforeMerge}`,
        [whereOf(pin.head)],
        actions,
      );
      continue;
    }
    judged.push({
      subject: `companion ${c.id}`,
      ...b.where,
      value: b.version,
      outcome: `bundled (${shorten(b.from)})`,
    });
    judged.push({
      subject: `companion ${c.id}`,
      ...h.where,
      value: h.version,
      outcome: `bundled (${shorten(h.from)})`,
    });
    const move = classifyMove(b.version, h.version);
    if (move.kind === "none") continue;
    if (move.kind === "downgrade") {
      const caveat = p.spec.rollback.find((r) => r.kind === "one-way" && r.companion === c.id);
      if (c.oneWay !== "none" && RANK[move.level!] >= RANK[c.oneWay]) {
        find(
          "RollbackAcrossOneWay",
          "blocking",
          `${c.title} would go back ${b.version} → ${h.version} with ${c.ridesOn} ${baseTag} → ${headTag}; ` +
            `a ${c.oneWay} of it is one way${caveat ? `: ${caveat.text}` : "."}`,
          [whereOf(pin.head)],
          actions,
        );
        continue;
      }
    }
    if (c.maxMajorStep !== undefined && (move.majors ?? 0) > c.maxMajorStep) {
      find(
        "CompanionMajorJump",
        "blocking",
        `${c.title} jumps ${move.majors} majors (${b.version} → ${h.version}) with ${c.ridesOn} ` +
          `${baseTag} → ${headTag}; at most ${c.maxMajorStep} per upgrade.`,
        [whereOf(pin.head)],
        actions,
      );
    }
    const oneWay = c.oneWay !== "none" && move.level !== undefined &&
      RANK[move.level] >= RANK[c.oneWay];
    find(
      "CompanionMoves",
      oneWay ? "blocking" : "attention",
      `${c.title} rides along: ${b.version} → ${h.version} (${move.kind}) with ${c.ridesOn} ${baseTag} → ${headTag}` +
        `${oneWay ? `; a ${c.oneWay} move of it is one way` : ""}. ${c.readBeforeMerge}`,
      [whereOf(pin.head)],
      actions,
    );
  }

  // --- companion edits ----------------------------------------------------------------------------
  for (const e of p.spec.companionEdits) {
    const move = moves.find((m) => m.pinSet === e.when.pinSet);
    const actions = actionsFor("companionEdit", e.id);
    if (!move || move.kind === "downgrade" || move.kind === "none") continue;
    const far = move.kind === "unparsed" || RANK[move.kind] >= RANK[e.when.moves];
    if (!far) continue;
    const base = read(input.base, "base", e.file, e.select);
    const head = read(input.head, "head", e.file, e.select);
    const changed = base.sel.kind === "found" && head.sel.kind === "found" &&
      norm(base.sel.text ?? "") !== norm(head.sel.text ?? "");
    note(`edit ${e.id}`, base, "before");
    note(`edit ${e.id}`, head, changed ? "moved" : "unchanged");
    if (head.sel.kind !== "found") {
      unreadable(`edit ${e.id}`, head);
    } else if (!changed) {
      find(
        "CompanionEditMissing",
        "blocking",
        `${e.when.pinSet} moved a ${move.kind} (${move.from} → ${move.to}) but ${e.file} ` +
          `${selectorText(e.select)} stays ${shown(head)}. ${e.why}`,
        [whereOf(head)],
        actions,
      );
    }
  }

  const patterns: PatternStatus[] = p.spec.breakingPatterns.map((b) => {
    const base = {
      id: b.id,
      pattern: b.pattern,
      action: b.action,
      ...(b.check ? { check: b.check } : {}),
    };
    if (detected.has(b.id)) return { ...base, status: "detected" as const };
    if (b.detection === "after-merge") return { ...base, status: "after-merge" as const };
    if (b.detectedBy) {
      const [kind, id] = Object.entries(b.detectedBy)[0]!;
      if (ran.has(`${kind}:${id}`)) return { ...base, status: "not-seen" as const };
    }
    return { ...base, status: "manual" as const };
  });

  return {
    name,
    title: p.metadata.title,
    moved: moves.length > 0,
    moves,
    arrivesAs: `${p.spec.arrivesAs.renovateGroups.join(", ")} (${
      p.spec.arrivesAs.datasources.join(", ")
    })`,
    changedFiles: input.changed.filter((c) => owns(p, c)),
    judged,
    findings,
    readBeforeMerge: p.spec.readBeforeMerge.map((l) => ({
      title: l.title,
      ...(l.url ? { url: l.url } : {}),
      ...(l.note ? { note: l.note } : {}),
    })),
    patterns,
    afterMerge: p.spec.afterMerge.map((a) => ({ id: a.id, reader: a.reader, summary: a.summary })),
    rollback: p.spec.rollback.map((r) => ({ kind: r.kind, text: r.text })),
  };
}
