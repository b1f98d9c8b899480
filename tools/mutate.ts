// deno-lint-ignore-file no-console
/**
 * The mutation campaign: every named mutant in tools/mutants/*.json removes or weakens one safety
 * guard with a small source edit; the tests named with it must then fail. A mutant that survives
 * is a guard the suite does not defend.
 *
 * Run by ./tools/mutate (which installs the pinned toolchain first) and as a gate of ./tools/test.
 * Mutations are applied in throwaway copies of the repository, never in the working tree: other
 * people and processes use it, and an interrupted run must leave nothing behind there.
 */
import { parseArgs } from "./mutation/args.ts";
import { loadMutants, type Mutant, type MutantProblem } from "./mutation/mutants.ts";
import { type Classification, classifyRun, testCommand } from "./mutation/classify.ts";
import { makeWorkspaceCopy, type WorkspaceCopy } from "./mutation/workspace.ts";

/**
 * A mutant's tests get this long, scaled from their unmutated run (a hang must not stall CI), or
 * a fixed bound when the baseline was not timed here (--baseline-passed).
 */
function timeoutFor(baselineSeconds: number | undefined): number {
  if (baselineSeconds === undefined) return UNTIMED_LIMIT_SECONDS;
  return Math.max(30, Math.ceil(3 * baselineSeconds + 15));
}
const UNTIMED_LIMIT_SECONDS = 120;

interface Outcome {
  readonly name: string;
  readonly kind: "killed" | "survived" | "broken" | "not run";
  readonly line: string;
}

/**
 * Runs the campaign for the repository at `root` with command-line `argv`; every line of output
 * goes to `print`. Returns the exit code: 0 all killed, 1 any survivor/broken/unrun, 2 usage.
 */
export async function runCampaign(
  root: string,
  argv: readonly string[],
  print: (line: string) => void,
): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    print(`mutate: ${parsed.error}`);
    print(USAGE);
    return 2;
  }
  const args = parsed.value;
  if (args.help) {
    print(USAGE);
    return 0;
  }
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;

  const loaded = await loadMutants(root);
  let mutants = loaded.mutants;
  const problems: MutantProblem[] = [...loaded.problems];
  if (args.only !== undefined) {
    const known = new Set([...mutants.map((m) => m.name), ...problems.map((p) => p.name)]);
    const unknown = args.only.filter((n) => !known.has(n));
    if (unknown.length > 0) {
      print(`mutate: --only names no mutant: ${unknown.join(", ")}`);
      return 2;
    }
    const only = new Set(args.only);
    mutants = mutants.filter((m) => only.has(m.name));
    problems.splice(0, problems.length, ...problems.filter((p) => only.has(p.name)));
  }

  if (args.list) {
    for (const m of mutants) {
      print(`${m.name}  (${m.source})\n  ${m.file}\n  tests: ${m.tests.join(" ")}\n  ${m.why}`);
    }
    for (const p of problems) print(`BROKEN ${p.name} (${p.source}) — ${p.problem}`);
    print(
      `mutants: ${mutants.length} listed${problems.length ? `, ${problems.length} broken` : ""}`,
    );
    return problems.length > 0 ? 1 : 0;
  }

  const outcomes: Outcome[] = [];
  const width = Math.max(
    0,
    ...mutants.map((m) => m.name.length),
    ...problems.map((p) => p.name.length),
  );
  const report = (o: Outcome) => {
    outcomes.push(o);
    print(o.line);
  };
  for (const p of problems) {
    report({
      name: p.name,
      kind: "broken",
      line: `BROKEN   ${p.name.padEnd(width)}  ${p.problem} (${p.source})`,
    });
  }
  if (mutants.length === 0) return finish(outcomes, elapsed(), print);

  const jobs = Math.min(args.jobs, mutants.length);
  const copies: WorkspaceCopy[] = [];
  try {
    for (let i = 0; i < jobs; i++) {
      const copy = await makeWorkspaceCopy(root);
      copies.push(copy);
      liveCopies.add(copy.dir);
    }

    // Unmutated first, once per distinct test list: a red or hanging baseline is an error to
    // report, never a kill to count.
    const lists = new Map<string, readonly string[]>();
    for (const m of mutants) lists.set(listKey(m.tests), m.tests);
    const baseline = new Map<string, { seconds?: number; red?: string }>();
    const baselineStarted = elapsed();
    if (args.baselinePassed) {
      // The caller (./tools/test after a green full suite) just ran these very files unmutated.
      for (const key of lists.keys()) baseline.set(key, {});
    }
    await pool(
      args.baselinePassed ? [] : [...lists.entries()],
      copies,
      async ([key, tests], copy) => {
        const budgetLeft = args.budgetSeconds === undefined
          ? undefined
          : args.budgetSeconds - elapsed();
        if (budgetLeft !== undefined && budgetLeft <= 0) {
          baseline.set(key, { seconds: 0, red: "not run: the time budget was spent" });
          return;
        }
        const limit = Math.min(300, budgetLeft ?? 300);
        const c = await runTests(copy.dir, tests, limit);
        if (c.kind === "failed") {
          baseline.set(key, {
            seconds: c.seconds,
            red: `baseline red: ${c.detail} fails without any mutation`,
          });
        } else if (c.kind === "timeout") {
          baseline.set(key, {
            seconds: c.seconds,
            red: `baseline did not finish within ${limit}s`,
          });
        } else if (c.kind === "error") {
          baseline.set(key, { seconds: c.seconds, red: `baseline could not run: ${c.detail}` });
        } else if (c.tests === 0) {
          baseline.set(key, { seconds: c.seconds, red: "baseline ran no tests" });
        } else {
          baseline.set(key, { seconds: c.seconds });
        }
      },
    );

    const red = [...baseline.values()].filter((b) => b.red !== undefined).length;
    print(
      args.baselinePassed
        ? `baseline: ${lists.size} test list(s) not rerun (--baseline-passed: the full suite just passed)`
        : `baseline: ${lists.size - red} of ${lists.size} test list(s) green unmutated in ${
          (elapsed() - baselineStarted).toFixed(0)
        }s`,
    );

    await pool(mutants, copies, async (m, copy) => {
      const base = baseline.get(listKey(m.tests))!;
      const label = m.name.padEnd(width);
      if (base.red !== undefined) {
        const kind = base.red.startsWith("not run") ? "not run" : "broken";
        report({
          name: m.name,
          kind,
          line: `${kind === "broken" ? "BROKEN " : "not run"}  ${label}  ${base.red}`,
        });
        return;
      }
      if (args.budgetSeconds !== undefined && elapsed() >= args.budgetSeconds) {
        report({
          name: m.name,
          kind: "not run",
          line: `not run  ${label}  the time budget was spent`,
        });
        return;
      }
      const limit = timeoutFor(base.seconds);
      const c = await copy.withEdit(
        m.file,
        m.find,
        m.replace,
        () => runTests(copy.dir, m.tests, limit),
      );
      report(outcomeOf(m, label, c, limit));
    });
  } finally {
    for (const c of copies) {
      await c.remove();
      liveCopies.delete(c.dir);
    }
  }
  return finish(outcomes, elapsed(), print);
}

function outcomeOf(m: Mutant, label: string, c: Classification, limit: number): Outcome {
  const secs = `${c.seconds.toFixed(1)}s`;
  switch (c.kind) {
    case "failed":
      return { name: m.name, kind: "killed", line: `killed   ${label}  (${c.detail}, ${secs})` };
    case "timeout":
      // A mutant that makes its tests hang is caught (CI would stop on it), but say so: a
      // timeout is weaker evidence than a named failing assertion.
      return {
        name: m.name,
        kind: "killed",
        line: `killed (timeout) ${label}  (its tests did not finish within ${limit}s)`,
      };
    case "passed":
      return { name: m.name, kind: "survived", line: `SURVIVED ${label}  — ${m.why}` };
    case "error":
      return {
        name: m.name,
        kind: "broken",
        line: `BROKEN   ${label}  mutated code does not run: ${c.detail}`,
      };
  }
}

function finish(
  outcomes: readonly Outcome[],
  seconds: number,
  print: (line: string) => void,
): number {
  const count = (k: Outcome["kind"]) => outcomes.filter((o) => o.kind === k).length;
  const survivors = outcomes.filter((o) => o.kind === "survived").map((o) => o.name);
  if (survivors.length > 0) print(`survivors (guards no test defends): ${survivors.join(", ")}`);
  print(`mutate: ${outcomes.length} mutants in ${seconds.toFixed(0)}s`);
  let line = `mutants: ${count("killed")} killed, ${count("survived")} survived`;
  if (count("broken") > 0) line += `, ${count("broken")} broken`;
  if (count("not run") > 0) line += `, ${count("not run")} not run`;
  print(line);
  return outcomes.every((o) => o.kind === "killed") ? 0 : 1;
}

function listKey(tests: readonly string[]): string {
  return [...tests].sort().join("\n");
}

async function runTests(
  dir: string,
  tests: readonly string[],
  limitSeconds: number,
): Promise<Classification> {
  const t0 = performance.now();
  const { cmd, args } = testCommand(Deno.execPath(), tests, limitSeconds);
  const child = new Deno.Command(cmd, {
    args,
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  const out = await child.output().finally(() => running.delete(child));
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return classifyRun(out.code, text, (performance.now() - t0) / 1000);
}

/** Runs `work` over `items`, each call holding one workspace copy for its duration. */
async function pool<T>(
  items: readonly T[],
  copies: readonly WorkspaceCopy[],
  work: (item: T, copy: WorkspaceCopy) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(copies.map(async (copy) => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item, copy);
    }
  }));
}

const USAGE = `usage: ./tools/mutate [--only NAME[,NAME]] [--list] [--jobs N] [--budget-seconds S]
                      [--baseline-passed]
  Applies each mutant of tools/mutants/*.json in a throwaway copy of the repository, runs its
  tests, and expects at least one to fail. Ends with \`mutants: N killed, N survived\`; exits 1 on
  any survivor, broken mutant or mutant left unrun by the budget.
  --only      run only these mutants (comma-separated names)
  --list      validate and list the mutants without running anything
  --jobs N    mutants run in parallel (default 1; each job has its own copy)
  --budget-seconds S   start no new run after S seconds (what is left is reported "not run")
  --baseline-passed    skip the unmutated runs: the caller just ran these tests green
                       (./tools/test passes it after a green full suite)`;

/** Test runs in flight and copies not yet removed, for a clean stop on SIGINT/SIGTERM. */
const running = new Set<Deno.ChildProcess>();
const liveCopies = new Set<string>();

/**
 * Interrupted (Ctrl-C, or CI's own timeout): stop the test runs (`timeout` relays the signal to
 * its whole process group) and remove the copies, so nothing is left running or on disk.
 */
function stopOnSignal(signal: "SIGINT" | "SIGTERM", code: number): void {
  Deno.addSignalListener(signal, () => {
    for (const child of running) {
      try {
        child.kill("SIGTERM");
      } catch { /* already exited */ }
    }
    for (const dir of liveCopies) {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* best effort: a temp dir */ }
    }
    console.error(`mutate: interrupted by ${signal}`);
    Deno.exit(code);
  });
}

if (import.meta.main) {
  stopOnSignal("SIGINT", 130);
  stopOnSignal("SIGTERM", 143);
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  Deno.exit(await runCampaign(root, Deno.args, (line) => console.log(line)));
}
