// deno-lint-ignore-file no-console
/**
 * Generates docs/reasons.md from the reason catalogue (src/domain/reasons.ts).
 * `--check` exits 1 when the committed file differs from what would be generated.
 */
import { REASONS } from "../src/domain/reasons.ts";

export function renderReasonsDoc(): string {
  const lines = [
    "# Reason codes",
    "",
    "Generated from `src/domain/reasons.ts` by `deno task reasons`; do not edit by hand.",
    "Reason codes are stable API. Retry classes: `never` (a human must change the input),",
    "`backoff` (a read may be tried again; never permission to repeat a mutation), `wait` (a gate",
    "is closed or evidence is still arriving).",
    "",
  ];
  const areas = [...new Set(REASONS.map((r) => r.area))];
  for (const area of areas) {
    lines.push(`## ${area}`, "", "| code | retry | meaning |", "|---|---|---|");
    for (const r of REASONS.filter((x) => x.area === area)) {
      lines.push(`| \`${r.code}\` | ${r.retry} | ${r.meaning.replaceAll("|", "\\|")} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const path = new URL("../docs/reasons.md", import.meta.url);
  const want = renderReasonsDoc();
  if (Deno.args.includes("--check")) {
    let have = "";
    try {
      have = await Deno.readTextFile(path);
    } catch { /* missing counts as stale */ }
    if (have !== want) {
      console.error("docs/reasons.md is stale: run `deno task reasons`");
      Deno.exit(1);
    }
  } else {
    await Deno.writeTextFile(path, want);
  }
}
