import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { dispatch } from "../../src/cli/dispatch.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { plainArgs } from "../../src/cli/command.ts";
import { seededRandom } from "../../src/sim/seeded_random.ts";

/** Option sets shaped like cairn's commands': strings with and without defaults, booleans, lists. */
const CONFIGS: ParseArgsOptionsConfig[] = [
  {
    output: { type: "string", short: "o", default: "text" },
    now: { type: "string" },
    catalogue: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  {
    fetch: { type: "boolean", default: false },
    tag: { type: "string", multiple: true },
    "registry-mirror": { type: "string", multiple: true },
    approvals: { type: "string", default: "1" },
    help: { type: "boolean", short: "h" },
  },
];

const TOKENS = [
  "plans/a.yaml",
  "b",
  "",
  "x=y",
  "--output",
  "--output=json",
  "--output=",
  "json",
  "--now",
  "2026-11-25T00:00:00Z",
  "--catalogue=c.yaml",
  "--fetch",
  "--fetch=true",
  "--tag",
  "--tag=v1",
  "--registry-mirror",
  "a=b",
  "--approvals",
  "2",
  "--help",
  "-h",
  "-o",
  "--",
  "-",
  "-1",
  "--unknown",
  "--__proto__",
  "-x",
];

/** A small deterministic generator, so a failure names its seed. */
const rng = seededRandom;

/** parseArgs' result, or the error it throws. */
function viaNode(options: ParseArgsOptionsConfig, args: string[]) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    return e as Error;
  }
}

Deno.test("plainArgs answers exactly what parseArgs answers, or leaves the line to it", () => {
  let answered = 0;
  for (const [c, options] of CONFIGS.entries()) {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = rng(seed * 7 + c);
      const args = Array.from(
        { length: Math.floor(next() * 7) },
        () => TOKENS[Math.floor(next() * TOKENS.length)]!,
      );
      const plain = plainArgs(options, args);
      if (plain === undefined) continue;
      answered++;
      const node = viaNode(options, args);
      assert(!(node instanceof Error), `config ${c}, ${JSON.stringify(args)}: ${node}`);
      // Prototype (none), keys, their order and values, positionals.
      assertEquals(plain, { values: node.values, positionals: node.positionals });
      assertEquals(Object.keys(plain.values), Object.keys(node.values), JSON.stringify(args));
    }
  }
  assert(answered > 1000, `only ${answered} lines were plain: the generator tests too little`);
});

Deno.test("plainArgs takes the command lines of the plan check benchmark and of CI", () => {
  const [options] = CONFIGS;
  const plain = plainArgs(options!, ["p.yaml", "--now", "2026-11-25T00:00:00Z", "--output=json"]);
  assertEquals(plain?.positionals, ["p.yaml"]);
  assertEquals({ ...plain?.values }, { now: "2026-11-25T00:00:00Z", output: "json" });
});

Deno.test("a command line that is not plain gets parseArgs' own usage errors", async () => {
  let stderr = "";
  const io: CommandIO = {
    stdout: () => {},
    stderr: (t) => void (stderr += t),
    env: {},
    cwd: Deno.cwd(),
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await dispatch(["plan", "check", "p.yaml", "--now"], io);
  assertEquals(code, 2);
  assertEquals(
    stderr,
    "cairn plan check: UsageInvalid: Option '--now <value>' argument missing\n" +
      "run 'cairn plan check --help' for usage\n",
  );
});
