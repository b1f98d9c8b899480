/**
 * The CLI frame's manners: group help, `help CMD`, short usage errors with suggestions, one
 * "Exit codes" per help, shell completion. Driven in-process through dispatch (fast); the
 * behaviours that depend on the real process (a closed pipe) spawn ./cairn.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { renderHelp } from "../../src/cli/command.ts";
import { COMMANDS } from "../../src/cli/registry.ts";
import { editDistance, suggest } from "../../src/cli/suggest.ts";

import { ROOT, runCli as run } from "../_helpers/cli_run.ts";

const PLAN_SUBCOMMANDS = COMMANDS.filter((c) => c.path[0] === "plan").map((c) => c.path[1]!);

for (const argv of [["plan", "--help"], ["help", "plan"], ["plan", "-h"]]) {
  Deno.test(`cairn ${argv.join(" ")} lists the plan subcommands`, async () => {
    const r = await run(argv);
    assertEquals(r.code, 0);
    for (const sub of PLAN_SUBCOMMANDS) assert(r.stdout.includes(`plan ${sub} `), sub);
    assert(!r.stdout.includes("journal show"), "group help lists only its group");
  });
}

Deno.test("cairn plan (no subcommand) shows the group help and exits 2", async () => {
  const r = await run(["plan"]);
  assertEquals(r.code, 2);
  assert(r.stdout.includes("plan check"));
});

Deno.test("cairn help plan check prints plan check's help, not the top-level help", async () => {
  const r = await run(["help", "plan", "check"]);
  assertEquals(r.code, 0);
  assert(r.stdout.startsWith("Usage: cairn plan check "), r.stdout.slice(0, 80));
  assert(!r.stdout.includes("Commands:"));
});

Deno.test("an unknown command is two lines with a suggestion, exit 2", async () => {
  const r = await run(["plna", "check", "x.yaml"]);
  assertEquals(r.code, 2);
  assertEquals(r.stdout, "");
  assertEquals(
    r.stderr,
    `cairn: UsageInvalid: unknown command "plna" — did you mean "plan"?\n` +
      `run 'cairn --help' for usage\n`,
  );
});

Deno.test("an unknown subcommand suggests the nearest one in its group", async () => {
  const r = await run(["journal", "exprot"]);
  assertEquals(r.code, 2);
  assert(r.stderr.includes(`did you mean "journal export"?`), r.stderr);
  assertEquals(r.stderr.trim().split("\n").length, 2);
});

Deno.test("an unknown flag is two lines naming the nearest flag, exit 2, no help dump", async () => {
  const r = await run(["plan", "check", "--nwo", "2026-01-01T00:00:00Z", "x.yaml"]);
  assertEquals(r.code, 2);
  assertEquals(
    r.stderr,
    `cairn plan check: UsageInvalid: unknown flag "--nwo" — did you mean "--now"?\n` +
      `run 'cairn plan check --help' for usage\n`,
  );
});

Deno.test("a missing argument is a short usage error too", async () => {
  const r = await run(["plan", "check"]);
  assertEquals(r.code, 2);
  assertEquals(r.stderr.trim().split("\n").length, 2, r.stderr);
  assert(!r.stderr.includes("Exit codes"));
});

Deno.test("a missing or extra argument is named, with the usage line, not counted", async () => {
  const check = await run(["plan", "check"]);
  assert(
    check.stderr.startsWith(
      "cairn plan check: UsageInvalid: missing FILE... (usage: cairn plan check FILE... [",
    ),
    check.stderr,
  );
  const abort = await run(["abort"]);
  assert(
    abort.stderr.includes("UsageInvalid: missing PLAN (usage: cairn abort PLAN "),
    abort.stderr,
  );
  const planNew = await run(["plan", "new"]);
  assert(planNew.stderr.includes("missing talos|kubernetes|config|component"), planNew.stderr);
  const extra = await run(["status", "typo.db"]);
  assertEquals(extra.code, 2);
  assert(extra.stderr.includes('unexpected argument(s) "typo.db"; takes none'), extra.stderr);
  for (const r of [check, abort, planNew, extra]) {
    assert(!/argument\(s\), got \d/.test(r.stderr), r.stderr);
  }
});

Deno.test("a far-off name gets no wild suggestion", () => {
  assertEquals(suggest("zzzzzz", ["plan", "journal"]), undefined);
  assertEquals(editDistance("plna", "plan"), 1);
});

Deno.test("every command's help states its exit codes exactly once", async () => {
  for (const entry of COMMANDS) {
    const help = renderHelp(await entry.load());
    assertEquals(help.match(/Exit codes/g)?.length, 1, entry.path.join(" "));
  }
});

Deno.test("cairn completion bash is a valid script naming every command", async () => {
  const r = await run(["completion", "bash"]);
  assertEquals(r.code, 0);
  for (const c of COMMANDS) assert(r.stdout.includes(c.path.at(-1)!), c.path.join(" "));
  const out = await new Deno.Command("bash", { args: ["-n"], stdin: "piped" }).spawn();
  const w = out.stdin.getWriter();
  await w.write(new TextEncoder().encode(r.stdout));
  await w.close();
  assert((await out.status).success, "bash -n rejects the completion script");
  assertEquals((await run(["completion", "fish"])).code, 2);
});

for (const argv of [["completion", "--help"], ["completion", "-h"], ["help", "completion"]]) {
  Deno.test(`cairn ${argv.join(" ")} prints how to install completion, exit 0`, async () => {
    const r = await run(argv);
    assertEquals([r.code, r.stderr], [0, ""]);
    assert(r.stdout.startsWith("Usage: cairn completion bash|zsh\n"), r.stdout);
    assert(r.stdout.includes(`eval "$(cairn completion zsh)"`), r.stdout);
    assertEquals(r.stdout.match(/Exit codes/g)?.length, 1);
  });
}

Deno.test("cairn completion without a shell (or with two words) is a short usage error", async () => {
  const none = await run(["completion"]);
  assertEquals(none.code, 2);
  assertEquals(
    none.stderr,
    "cairn completion: UsageInvalid: expected bash or zsh (no shell given)\n" +
      "run 'cairn completion --help' for usage\n",
  );
  const extra = await run(["completion", "bash", "zsh"]);
  assertEquals(extra.code, 2);
  assert(extra.stderr.includes('(got "bash zsh")'), extra.stderr);
  assertEquals(extra.stdout, "");
});

Deno.test("cairn version points at --version (kubectl and talosctl spell it as a command)", async () => {
  const r = await run(["version"]);
  assertEquals(r.code, 2);
  assert(r.stderr.includes('unknown command "version" — did you mean "--version"?'), r.stderr);
});

Deno.test("a reader that closes the pipe early gets a quiet exit 0, no stack trace", async () => {
  // `true` has exited (the pipe has no reader) by the time cairn writes: the write meets EPIPE.
  const out = await new Deno.Command("bash", {
    args: ["-c", '{ sleep 0.3; ./cairn help plan check; echo "rc=$?" >&2; } | true'],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(new TextDecoder().decode(out.stderr), "rc=0\n");
});

for (const argv of [["plan", "help", "check"], ["--help", "plan", "check"]]) {
  Deno.test(`cairn ${argv.join(" ")} reads as cairn help plan check`, async () => {
    const r = await run(argv);
    assertEquals(r.code, 0, r.stderr);
    assert(r.stdout.startsWith("Usage: cairn plan check FILE..."), r.stdout.slice(0, 200));
  });
}

Deno.test("cairn plan help and cairn --help plan show the plan group's help", async () => {
  for (const argv of [["plan", "help"], ["--help", "plan"]]) {
    const r = await run(argv);
    assertEquals(r.code, 0, r.stderr);
    assert(r.stdout.startsWith("Usage: cairn plan <command>"), r.stdout.slice(0, 200));
  }
});

Deno.test("a flag before any command is an unknown flag, not an unknown command", async () => {
  const r = await run(["--verbose", "status"]);
  assertEquals(r.code, 2);
  assertEquals(
    r.stderr,
    'cairn: UsageInvalid: unknown flag "--verbose" (flags follow the command: cairn <command> ' +
      "[options])\nrun 'cairn --help' for usage\n",
  );
});

Deno.test("a mistyped plan kind gets the nearest kind", async () => {
  const r = await run(["plan", "new", "tallos", "--to", "v1.14.2", "--author", "a@example.com"]);
  assertEquals(r.code, 2);
  assert(
    r.stderr.includes(
      'plan new tallos: expected talos, kubernetes, config or component — did you mean "talos"?',
    ),
    r.stderr,
  );
});

Deno.test("cairn demo --dir refuses a directory holding a previous run before touching it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A file where the demo makes a directory: without the check the run fails at once (fast).
    await Deno.writeTextFile(`${dir}/trust`, "a previous run");
    for (
      const argv of [["demo", "--dir", dir], ["demo", "--component", "rook-ceph", "--dir", dir]]
    ) {
      const r = await run(argv);
      assertEquals(r.code, 2);
      assert(r.stderr.includes(`--dir ${dir} is not empty (a previous demo?)`), r.stderr);
    }
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["trust"]);
    assertEquals(await Deno.readTextFile(`${dir}/trust`), "a previous run");
    const file = await run(["demo", "--dir", `${dir}/trust`]);
    assert(file.stderr.includes("is not a directory"), file.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn demo --fault lists only the faults the demo's TalosUpgrade can take", async () => {
  const r = await run(["demo", "--fault", "nope"]);
  assertEquals(r.code, 2);
  assert(r.stderr.includes("reboot-response-lost"), r.stderr);
  assert(!r.stderr.includes("kube-proxy-not-ready"), r.stderr);
});
