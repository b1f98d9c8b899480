/**
 * tools/system_packages.sh, sourced by ./tools/test and ./tools/bench: nothing is installed when
 * every command is present, and a missing one that cannot be installed is named with the package
 * to install (never a silent pass). Runs bash against fake package lists; installs nothing.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";

const SCRIPT = new URL("../../tools/system_packages.sh", import.meta.url).pathname;

async function commandPath(tool: string): Promise<string> {
  const which = await new Deno.Command("bash", { args: ["-c", `command -v ${tool}`] }).output();
  return new TextDecoder().decode(which.stdout).trim();
}

async function run(list: string, purpose: string, path: string) {
  // bash by absolute path: the child's PATH is the restricted one.
  const out = await new Deno.Command(await commandPath("bash"), {
    args: [
      "-c",
      `. "$1"; CAIRN_SYSTEM_PACKAGES="$2"; cairn_system_packages "$3"`,
      "bash",
      SCRIPT,
      list,
      purpose,
    ],
    env: { PATH: path },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("system packages: present commands install nothing; a missing one without apt-get is named", async () => {
  // A PATH holding only what the function itself calls: no apt-get, no sudo.
  const bin = await Deno.makeTempDir({ prefix: "cairn-pkgs-" });
  try {
    for (const tool of ["id", "mktemp", "tail", "rm"]) {
      await Deno.symlink(await commandPath(tool), join(bin, tool));
    }
    const list = [
      "test,bench  id                   fake-id       present",
      "bench       cairn-missing-tool   cairn-tool    missing, but not for tests",
    ].join("\n");
    assertEquals(await run(list, "test", bin), { code: 0, stderr: "" });
    const missing = await run(list, "bench", bin);
    assertEquals(missing.code, 1);
    assert(missing.stderr.includes("cairn-tool"), missing.stderr);
    assert(!missing.stderr.includes("fake-id"), "present commands are not asked for");
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("system packages: an absolute path pattern (a binary Debian keeps off PATH) is looked up as a file", async () => {
  const bin = await Deno.makeTempDir({ prefix: "cairn-pkgs-" });
  try {
    for (const tool of ["id", "mktemp", "tail", "rm"]) {
      await Deno.symlink(await commandPath(tool), join(bin, tool));
    }
    await Deno.mkdir(join(bin, "lib", "15", "bin"), { recursive: true });
    await Deno.writeTextFile(join(bin, "lib", "15", "bin", "initdb"), "");
    const present = `test  ${bin}/lib/*/bin/initdb  fake-postgresql  present off PATH`;
    assertEquals(await run(present, "test", bin), { code: 0, stderr: "" });
    const absent = `test  ${bin}/nowhere/*/bin/initdb  fake-postgresql  absent`;
    const missing = await run(absent, "test", bin);
    assertEquals(missing.code, 1);
    assert(missing.stderr.includes("fake-postgresql"), missing.stderr);
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});
