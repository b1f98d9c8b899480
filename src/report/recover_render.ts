/** Text rendering of `cairn recover OP` (the evidence view), for a terminal. */

/**
 * What the evidence view shows, as the renderer needs it. The engine's `EvidenceView`
 * (`engine/recovery/recover_actions.ts`) satisfies it; the report layer does not import the
 * engine, so it states the shape it reads.
 */
export interface RenderedEvidence {
  readonly operation: Readonly<Record<string, unknown>>;
  readonly attempts: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly phases: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly facts: Readonly<Record<string, unknown>>;
  readonly decisions: ReadonlyArray<
    {
      readonly kind: string;
      readonly attempt?: string;
      readonly possible: boolean;
      readonly why: string;
    }
  >;
}

/** Terminal emphasis; the command decides whether it colours (NO_COLOR, not a terminal). */
export interface TextStyle {
  readonly bold: (s: string) => string;
  readonly red: (s: string) => string;
  readonly green: (s: string) => string;
  readonly yellow: (s: string) => string;
}

function compact(v: unknown): string {
  return JSON.stringify(v);
}

/** The evidence view as lines of text, each ending in a newline. */
export function renderEvidence(v: RenderedEvidence, st: TextStyle): string {
  const out: string[] = [];
  const line = (text = "") => out.push(text + "\n");
  const o = v.operation;
  line(st.bold(`operation ${o["id"]}  ${o["state"]}`));
  line(`  machine ${o["machine"]} (step ${o["step"]})  plan ${o["plan"]}`);
  line(
    `  owner ${o["owner"]}  gen ${o["ownerGen"]}  epoch ${o["ownerEpoch"]}  since ${
      o["ownerSince"]
    }`,
  );
  line();
  line(st.bold("attempts"));
  for (const a of v.attempts) {
    const acct = a["unaccounted"]
      ? st.red("UNACCOUNTED")
      : `accounted by ${String(a["accountedBy"])}`;
    line(
      `  #${a["number"]} ${a["id"]}  ${String(a["phase"]).padEnd(8)} sent ${a["sentAt"]}  ` +
        `transport ≤ ${a["transportDeadline"]}  verification ≤ ${a["verificationDeadline"]}  ` +
        `response ${a["responseClass"] ?? "none"}  ${acct}`,
    );
  }
  line();
  line(st.bold("phases"));
  for (const p of v.phases) {
    line(`  ${p["at"]}  ${String(p["phase"]).padEnd(13)} ${p["kind"]}  ${compact(p["detail"])}`);
  }
  line();
  line(st.bold("facts"));
  line(`  cordon provenance: ${compact(v.facts["cordon"])}`);
  line(`  drain: ${compact(v.facts["drain"])}`);
  line(`  boot observed: ${compact(v.facts["bootObserved"])}`);
  line();
  line(st.bold("decisions"));
  for (const d of v.decisions) {
    const tag = d.possible ? st.green("possible") : st.yellow("not now ");
    const what = d.attempt ? `${d.kind} ${d.attempt}` : d.kind;
    line(`  ${tag}  ${what}: ${d.why}`);
  }
  return out.join("");
}
