/** Text rendering of `cairn recover OP` (the evidence view). Not a command. */
import { type CommandIO, style } from "./command.ts";
import type { EvidenceView } from "./recover_actions.ts";

function line(io: CommandIO, text = ""): void {
  io.stdout(text + "\n");
}

function compact(v: unknown): string {
  return JSON.stringify(v);
}

export function printEvidence(io: CommandIO, v: EvidenceView): void {
  const st = style(io);
  const o = v.operation;
  line(io, st.bold(`operation ${o["id"]}  ${o["state"]}`));
  line(io, `  machine ${o["machine"]} (step ${o["step"]})  plan ${o["plan"]}`);
  line(
    io,
    `  owner ${o["owner"]}  gen ${o["ownerGen"]}  epoch ${o["ownerEpoch"]}  since ${
      o["ownerSince"]
    }`,
  );
  line(io);
  line(io, st.bold("attempts"));
  for (const a of v.attempts) {
    const acct = a["unaccounted"]
      ? st.red("UNACCOUNTED")
      : `accounted by ${String(a["accountedBy"])}`;
    line(
      io,
      `  #${a["number"]} ${a["id"]}  ${String(a["phase"]).padEnd(8)} sent ${a["sentAt"]}  ` +
        `transport ≤ ${a["transportDeadline"]}  verification ≤ ${a["verificationDeadline"]}  ` +
        `response ${a["responseClass"] ?? "none"}  ${acct}`,
    );
  }
  line(io);
  line(io, st.bold("phases"));
  for (const p of v.phases) {
    line(
      io,
      `  ${p["at"]}  ${String(p["phase"]).padEnd(13)} ${p["kind"]}  ${compact(p["detail"])}`,
    );
  }
  line(io);
  line(io, st.bold("facts"));
  line(io, `  cordon provenance: ${compact(v.facts["cordon"])}`);
  line(io, `  drain: ${compact(v.facts["drain"])}`);
  line(io, `  boot observed: ${compact(v.facts["bootObserved"])}`);
  line(io);
  line(io, st.bold("decisions"));
  for (const d of v.decisions) {
    const tag = d.possible ? st.green("possible") : st.yellow("not now ");
    const what = d.attempt ? `${d.kind} ${d.attempt}` : d.kind;
    line(io, `  ${tag}  ${what}: ${d.why}`);
  }
}
