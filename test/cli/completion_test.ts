/**
 * `cairn completion bash|zsh` behaves as a completion does: the generated bash function is run by
 * the real bash with COMP_WORDS / COMP_CWORD set as bash sets them on <TAB>, and what it puts in
 * COMPREPLY is checked. The zsh script is checked for syntax by the real zsh when one is
 * installed (zsh is not a dependency of cairn).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { COMMANDS } from "../../src/cli/registry.ts";
import { runCli as run } from "../_helpers/cli_run.ts";

const script = async (shell: string) => {
  const r = await run(["completion", shell]);
  assertEquals(r.code, 0, r.stderr);
  return r.stdout;
};
const BASH = await script("bash");

/**
 * What bash's completion would offer for `line` (the cursor at its end): the words as bash splits
 * them, an empty current word when the line ends in a space.
 */
async function complete(line: string): Promise<string[]> {
  const words = line.split(" ");
  const o = await new Deno.Command("bash", {
    args: [
      "-c",
      '_cairn_script="$1"; shift; eval "$_cairn_script"; COMP_WORDS=("$@"); ' +
      "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cairn; printf '%s\\n' \"${COMPREPLY[@]}\"",
      "bash",
      BASH,
      ...words,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(o.stderr);
  assertEquals([o.code, err], [0, ""], line);
  return new TextDecoder().decode(o.stdout).split("\n").filter((w) => w !== "");
}

Deno.test("cairn pl<TAB> completes to plan", async () => {
  assertEquals(await complete("cairn pl"), ["plan"]);
});

Deno.test("cairn <TAB> offers every top-level command from the registry, plus help and completion", async () => {
  const top = new Set([...COMMANDS.map((c) => c.path[0]!), "help", "completion"]);
  assertEquals(new Set(await complete("cairn ")), top);
});

Deno.test("cairn plan <TAB> offers the plan subcommands in the registry", async () => {
  const subs = COMMANDS.filter((c) => c.path[0] === "plan").map((c) => c.path[1]!);
  assertEquals(await complete("cairn plan "), subs);
  assertEquals(await complete("cairn help plan "), subs);
});

Deno.test("flags complete per command once the word starts with -", async () => {
  assertEquals(await complete("cairn plan check --"), [
    "--output",
    "--catalogue",
    "--now",
    "--help",
  ]);
  assertEquals(await complete("cairn sim serve --sp"), ["--speed"]);
  assertEquals(await complete("cairn status --j"), ["--journal"]);
  // A flag of another command is not offered.
  assertEquals(await complete("cairn plan check --sp"), []);
});

Deno.test("a flag's value and a positional are left to the shell's file completion", async () => {
  // Empty COMPREPLY plus `complete -o default` is bash's file completion.
  assertEquals(await complete("cairn plan check --output "), []);
  assertEquals(await complete("cairn plan check -o "), []);
  assertEquals(await complete("cairn plan check "), []);
  assert(BASH.trimEnd().endsWith("complete -o default -F _cairn cairn"));
});

Deno.test("cairn completion <TAB> offers the shells; an unknown shell is a usage error", async () => {
  assertEquals(await complete("cairn completion "), ["bash", "zsh"]);
  assertEquals((await run(["completion", "fish"])).code, 2);
});

/** Whether `zsh` can be started at all (it is not a dependency of cairn). */
async function zshInstalled(): Promise<boolean> {
  try {
    await new Deno.Command("zsh", { args: ["-c", "true"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

Deno.test("the zsh script loads bash's compatibility layer and is valid zsh (zsh -n, when installed)", async () => {
  const zsh = await script("zsh");
  assert(zsh.startsWith("#compdef cairn\n"));
  assert(zsh.includes("bashcompinit"));
  // The completion function is the same one the bash test above exercises.
  assert(
    zsh.includes(BASH.slice(BASH.indexOf("_cairn_subcommands() {"), BASH.indexOf("complete -o"))),
  );
  if (!(await zshInstalled())) {
    // zsh is absent here: its syntax check is the one assertion that cannot run.
    Deno.stderr.writeSync(
      new TextEncoder().encode("zsh is not installed: `zsh -n` on the zsh script not run\n"),
    );
    return;
  }
  const child = new Deno.Command("zsh", { args: ["-n"], stdin: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(zsh));
  await w.close();
  const out = await child.output();
  assertEquals([out.code, new TextDecoder().decode(out.stderr)], [0, ""]);
});
