/**
 * Runs of `deno test` and how their outcome is read. A run is `failed` only when deno names a
 * failing test; a run that could not start (syntax error, module-level throw) is an `error`, never
 * a kill: a mutant that breaks loading tests nothing about the guard it targets.
 */
export type Classification =
  | { kind: "passed"; seconds: number; tests: number }
  | { kind: "failed"; seconds: number; detail: string }
  | { kind: "timeout"; seconds: number }
  | { kind: "error"; seconds: number; detail: string };

/** Exit codes of coreutils `timeout`: 124 after the signal, 137 after the follow-up SIGKILL. */
const TIMED_OUT = new Set([124, 137]);

/**
 * The command for one run. `timeout` makes itself a process-group leader and signals the whole
 * group, so a twin or git daemon started by a hung test dies with it. Type checking is left to
 * the `deno check` gate: here only behaviour decides, and a mutant that would not type-check
 * still has to be caught by a test.
 */
export function testCommand(
  deno: string,
  tests: readonly string[],
  limitSeconds: number,
): { cmd: string; args: string[] } {
  return {
    cmd: "timeout",
    args: [
      "--kill-after=10",
      String(Math.ceil(limitSeconds)),
      deno,
      "test",
      "-A",
      "--no-check",
      "--fail-fast",
      ...tests,
    ],
  };
}

export function classifyRun(code: number, output: string, seconds: number): Classification {
  if (TIMED_OUT.has(code)) return { kind: "timeout", seconds };
  const failures = failureEntries(output);
  const named = failures.filter((f) => !f.endsWith("(uncaught error)"));
  if (code !== 0) {
    if (named.length > 0) return { kind: "failed", seconds, detail: describeFailure(named[0]!) };
    const why = failures[0] ?? firstErrorLine(output) ?? `deno test exited ${code}`;
    return { kind: "error", seconds, detail: why };
  }
  const summary = /^ok \| (\d+) passed/m.exec(output);
  return { kind: "passed", seconds, tests: summary ? Number(summary[1]) : 0 };
}

/** The entries of deno's ` FAILURES ` section: `name => ./test/x_test.ts:12:6`, one per line. */
export function failureEntries(output: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((l) => l.trim() === "FAILURES");
  if (start === -1) return [];
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (/^(ok|FAILED) \|/.test(l) || l.startsWith("error: ")) break;
    if (l.trim() !== "") out.push(l.trim());
  }
  return out;
}

/** `steps ... inner => ./test/a_test.ts:3:43` → `"steps ... inner" in test/a_test.ts:3`. */
export function describeFailure(entry: string): string {
  const m = /^(.*) => \.\/(.+?):(\d+):\d+$/.exec(entry);
  return m ? `"${m[1]}" in ${m[2]}:${m[3]}` : entry;
}

function firstErrorLine(output: string): string | undefined {
  const l = output.split("\n").find((x) => x.startsWith("error: ") && x !== "error: Test failed");
  return l?.slice("error: ".length).trim();
}
