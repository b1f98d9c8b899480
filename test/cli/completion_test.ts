/**
 * `cairn completion bash|zsh` behaves as a completion does: the generated bash function is run by
 * the real bash with COMP_WORDS / COMP_CWORD set as bash sets them on <TAB>, and what it puts in
 * COMPREPLY is checked. The zsh script is checked by the real zsh (a test dependency,
 * tools/system_packages.sh): `zsh -n`, and <TAB> typed into an interactive zsh's line editor.
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

Deno.test("the zsh script loads bash's compatibility layer and is valid zsh (zsh -n)", async () => {
  const zsh = await script("zsh");
  assert(zsh.startsWith("#compdef cairn\n"));
  assert(zsh.includes("bashcompinit"));
  // The completion function is the same one the bash test above exercises.
  assert(
    zsh.includes(BASH.slice(BASH.indexOf("_cairn_subcommands() {"), BASH.indexOf("complete -o"))),
  );
  const child = new Deno.Command("zsh", { args: ["-n"], stdin: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(zsh));
  await w.close();
  const out = await child.output();
  assertEquals([out.code, new TextDecoder().decode(out.stderr)], [0, ""]);
});

/**
 * An interactive zsh on a pseudo-terminal (`script`, util-linux; no zpty): keys are typed into its
 * line editor and its screen is read until the expected text shows, with a generous bound.
 */
function zshOnTerminal(dir: string) {
  const child = new Deno.Command("script", {
    args: ["-qec", "zsh -f -i", "/dev/null"],
    cwd: dir,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir, ZDOTDIR: dir, TERM: "xterm" },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const decoder = new TextDecoder();
  const screen = { text: "" };
  const reading = (async () => {
    for await (const chunk of child.stdout) screen.text += decoder.decode(chunk, { stream: true });
  })();
  return {
    /** Types `keys`, then waits until the screen shows `expected` after what was there before. */
    async type(keys: string, expected: RegExp): Promise<string> {
      const from = screen.text.length;
      await writer.write(new TextEncoder().encode(keys));
      const deadline = Date.now() + 30_000; // a bound for a loaded machine, not a timing
      while (!expected.test(screen.text.slice(from))) {
        if (Date.now() > deadline) {
          throw new Error(
            `zsh never showed ${expected} after ${JSON.stringify(keys)}:\n` +
              JSON.stringify(screen.text.slice(from)),
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return screen.text.slice(from);
    },
    async close() {
      await writer.write(new TextEncoder().encode("\x15exit\n"));
      await writer.close();
      await reading;
      await child.status;
    },
  };
}

Deno.test("in a real zsh, <TAB> completes commands, subcommands, flags and a flag's file value", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-zsh-" });
  try {
    await Deno.writeTextFile(`${dir}/cairn.zsh`, await script("zsh"));
    await Deno.writeTextFile(`${dir}/only-catalogue.yaml`, "");
    const zsh = zshOnTerminal(dir);
    try {
      // READ""Y: the echoed command line does not match, only the command's output does. ^T
      // shows the line editor's buffer as one message, however the terminal redraws the line.
      await zsh.type(
        "PS1='> '; autoload -U compinit && compinit -u -D; source ./cairn.zsh; " +
          'show-buffer() { zle -M "BUF<$BUFFER>" }; zle -N show-buffer; ' +
          "bindkey '^T' show-buffer; print READ\"\"Y\n",
        /READY/,
      );
      const kill = "\x15"; // ^U: the line editor's kill-whole-line, between tries
      const complete = (typed: string) => zsh.type(`${kill}${typed}\t\x14`, /BUF<[^>]*>/);
      const buffer = async (typed: string) => /BUF<([^>]*)>/.exec(await complete(typed))![1];
      assertEquals(await buffer("cairn pl"), "cairn plan ");
      assertEquals(await buffer("cairn plan ch"), "cairn plan check ");
      assertEquals(await buffer("cairn sim serve --sp"), "cairn sim serve --speed ");
      assertEquals(await buffer("cairn help plan ve"), "cairn help plan verify ");
      // The word after a value-taking flag is a file, as with bash's `-o default`.
      assertEquals(
        await buffer("cairn plan check --catalogue only"),
        "cairn plan check --catalogue only-catalogue.yaml ",
      );
      // A flag of another command is not offered: the word stays as typed.
      assertEquals(await buffer("cairn plan check --sp"), "cairn plan check --sp");
    } finally {
      await zsh.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
