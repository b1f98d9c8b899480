import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { runCampaign } from "../../tools/mutate.ts";
import { parseArgs } from "../../tools/mutation/args.ts";
import { classifyRun, describeFailure, failureEntries } from "../../tools/mutation/classify.ts";

const DENO_FAILED = `running 2 tests from ./test/a_test.ts
good ... ok (1ms)
bad one ... FAILED (1ms)

 ERRORS 

bad one => ./test/a_test.ts:2:6
error: Error: boom

 FAILURES 

bad one => ./test/a_test.ts:2:6
steps ... inner => ./test/a_test.ts:3:43

FAILED | 1 passed | 2 failed (1 step) (9ms)

error: Test failed
`;

Deno.test("a run is a kill only when deno names a failing test", () => {
  assertEquals(failureEntries(DENO_FAILED), [
    "bad one => ./test/a_test.ts:2:6",
    "steps ... inner => ./test/a_test.ts:3:43",
  ]);
  assertEquals(
    describeFailure("steps ... inner => ./test/a_test.ts:3:43"),
    `"steps ... inner" in test/a_test.ts:3`,
  );
  assertEquals(classifyRun(1, DENO_FAILED, 1.5), {
    kind: "failed",
    seconds: 1.5,
    detail: `"bad one" in test/a_test.ts:2`,
  });
  // A module that does not load is an error of the mutant, not evidence about the guard.
  const syntax = "error: SyntaxError: Expected ';'\n    at file:///x/src/a.ts:1:8\n";
  assertEquals(classifyRun(1, syntax, 0.1).kind, "error");
  const uncaught =
    " FAILURES \n\n./test/a_test.ts (uncaught error)\n\nFAILED | 0 passed | 1 failed\n";
  assertEquals(classifyRun(1, uncaught, 0.1), {
    kind: "error",
    seconds: 0.1,
    detail: "./test/a_test.ts (uncaught error)",
  });
  assertEquals(classifyRun(124, "", 30).kind, "timeout");
  assertEquals(classifyRun(0, "ok | 3 passed | 0 failed (5ms)\n", 0.2), {
    kind: "passed",
    seconds: 0.2,
    tests: 3,
  });
});

Deno.test("mutate flags: --only, --jobs, --budget-seconds; unknown or malformed flags are refused", () => {
  assertEquals(parseArgs(["--only", "a,b", "--only=c", "--jobs", "2", "--budget-seconds=60"]), {
    ok: true,
    value: {
      list: false,
      help: false,
      jobs: 2,
      baselinePassed: false,
      only: ["a", "b", "c"],
      budgetSeconds: 60,
    },
  });
  assertEquals(parseArgs(["--list"]), {
    ok: true,
    value: { list: true, help: false, jobs: 1, baselinePassed: false },
  });
  for (
    const bad of [["--jobs", "0"], ["--jobs"], ["--budget-seconds", "1.5"], ["--only", ","], [
      "--fast",
    ]]
  ) {
    assert(!parseArgs(bad).ok, bad.join(" "));
  }
});

/** A tiny repository with one guard, a test that defends it, and mutants of every kind. */
async function fixtureRepo(mutants: unknown[]): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-mutate-test-" });
  const write = async (p: string, text: string) => {
    await Deno.mkdir(join(dir, p, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, p), text);
  };
  await write(
    "src/guard.ts",
    [
      "export function mayProceed(signatures: number, required: number): boolean {",
      "  return signatures >= required;",
      "}",
      "export function label(n: number): string {",
      "  return `n=${n}`;",
      "}",
      "",
    ].join("\n"),
  );
  await write(
    "test/guard_test.ts",
    [
      'import { mayProceed } from "../src/guard.ts";',
      'Deno.test("too few signatures are refused", () => {',
      '  if (mayProceed(1, 2)) throw new Error("one signature of two proceeded");',
      "});",
      "",
    ].join("\n"),
  );
  await write("tools/mutants/a.json", JSON.stringify(mutants, null, 2));
  const git = async (...args: string[]) => {
    const r = await new Deno.Command("git", {
      args: ["-C", dir, ...args],
      stdout: "null",
      stderr: "piped",
    })
      .output();
    assert(r.success, new TextDecoder().decode(r.stderr));
  };
  await git("init", "--quiet");
  // Tracked and untracked-but-not-ignored files both reach the copy; the test file stays untracked.
  await git("add", "src/guard.ts", "tools/mutants/a.json");
  return dir;
}

const KILLED = {
  name: "guard-removed",
  file: "src/guard.ts",
  find: "return signatures >= required;",
  replace: "return true;",
  tests: ["test/guard_test.ts"],
  why: "too few signatures must not proceed",
};
const SURVIVES = {
  name: "label-changed",
  file: "src/guard.ts",
  find: "`n=${n}`",
  replace: "`n:${n}`",
  tests: ["test/guard_test.ts"],
  why: "no test reads the label",
};

Deno.test("mutate applies each mutant in a copy, classifies killed and survived, and leaves the tree untouched", async () => {
  const dir = await fixtureRepo([KILLED, SURVIVES]);
  try {
    const before = await Deno.readTextFile(join(dir, "src/guard.ts"));
    const lines: string[] = [];
    const code = await runCampaign(dir, ["--jobs", "2"], (l) => lines.push(l));
    assertEquals(code, 1, lines.join("\n"));
    assert(
      lines.some((l) =>
        /^killed +guard-removed +\("too few signatures are refused" in test\/guard_test\.ts:2, \d+\.\ds\)$/
          .test(l)
      ),
      lines.join("\n"),
    );
    assert(
      lines.some((l) => /^SURVIVED label-changed +— no test reads the label$/.test(l)),
      lines.join("\n"),
    );
    assertEquals(lines.at(-1), "mutants: 1 killed, 1 survived");
    assertEquals(await Deno.readTextFile(join(dir, "src/guard.ts")), before);

    const only: string[] = [];
    assertEquals(await runCampaign(dir, ["--only", "guard-removed"], (l) => only.push(l)), 0);
    assertEquals(only.at(-1), "mutants: 1 killed, 0 survived");
    assertEquals(await runCampaign(dir, ["--only", "nope"], () => {}), 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mutate reports stale, ambiguous, duplicate and malformed mutants as broken and fails the run", async () => {
  const dir = await fixtureRepo([
    KILLED,
    { ...KILLED, replace: "return false;" },
    { ...KILLED, name: "stale", find: "return signatures > required;" },
    { ...KILLED, name: "ambiguous", find: "return" },
    { ...KILLED, name: "extra-field", tesst: [] },
    { ...KILLED, name: "no-test", tests: ["test/missing_test.ts"] },
  ]);
  try {
    const lines: string[] = [];
    assertEquals(await runCampaign(dir, ["--list"], (l) => lines.push(l)), 1);
    const broken = lines.filter((l) => l.startsWith("BROKEN"));
    assertEquals(broken.length, 5, lines.join("\n"));
    for (
      const want of [
        "duplicate name",
        "no longer occurs",
        "occurs 2 times",
        "unknown field(s) tesst",
        "does not exist",
      ]
    ) {
      assert(broken.some((l) => l.includes(want)), `${want}\n${lines.join("\n")}`);
    }
    const run: string[] = [];
    assertEquals(await runCampaign(dir, [], (l) => run.push(l)), 1);
    assertEquals(run.at(-1), "mutants: 1 killed, 0 survived, 5 broken");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a red baseline is reported as broken, never counted as kills", async () => {
  const dir = await fixtureRepo([KILLED]);
  try {
    await Deno.writeTextFile(
      join(dir, "test/guard_test.ts"),
      'Deno.test("always red", () => { throw new Error("red"); });\n',
    );
    const lines: string[] = [];
    assertEquals(await runCampaign(dir, [], (l) => lines.push(l)), 1);
    assert(
      lines.some((l) => l.startsWith("BROKEN") && l.includes("baseline red")),
      lines.join("\n"),
    );
    assertEquals(lines.at(-1), "mutants: 0 killed, 0 survived, 1 broken");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
