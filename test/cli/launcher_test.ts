/**
 * The `./cairn` launcher and tools/bootstrap.sh find the repository with shell builtins (no
 * forks: each costs several ms of every command's start). What that must not change: commands run
 * in the caller's working directory, whichever way the launcher is named, a shell that sources
 * bootstrap.sh keeps its directory and OLDPWD, and a working directory that cannot be re-entered
 * stops the launcher before anything runs from the wrong place.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../../", import.meta.url)).replace(/\/$/, "");
const dec = new TextDecoder();

async function bash(
  script: string,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    env: { CAIRN_TEST_ROOT: ROOT },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

Deno.test("the launcher runs the command in the caller's directory, by absolute or relative name", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-launcher-" });
  try {
    await Deno.mkdir(`${dir}/plans`);
    await Deno.writeTextFile(`${dir}/plans/x.yaml`, "not: a plan\n");
    // A relative argument resolves against the caller's directory: the plan is found and
    // refused for its content, not reported missing.
    for (const launcher of ["$CAIRN_TEST_ROOT/cairn", "./cairn"]) {
      const cwd = launcher === "./cairn" ? ROOT : dir;
      const file = launcher === "./cairn" ? `${dir}/plans/x.yaml` : "plans/x.yaml";
      const r = await bash(`${launcher} plan check ${file}; echo "exit=$?"`, cwd);
      ok(r.stdout.includes("exit=1"), `${launcher}: ${r.stdout}${r.stderr}`);
      ok(!/PlanFileMissing|NotFound/.test(r.stderr), `${launcher}: ${r.stderr}`);
      ok(r.stderr.includes("x.yaml"), r.stderr);
    }
    const fromTools = await bash(`../cairn --version`, `${ROOT}/tools`);
    assertEquals(fromTools.code, 0, fromTools.stderr);
    ok(fromTools.stdout.startsWith("cairn "), fromTools.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sourcing bootstrap.sh sets CAIRN_ROOT and leaves the shell's PWD and OLDPWD as they were", async () => {
  for (const source of ["$CAIRN_TEST_ROOT/tools/bootstrap.sh", "./bootstrap.sh", "bootstrap.sh"]) {
    const cwd = source === "$CAIRN_TEST_ROOT/tools/bootstrap.sh" ? "/" : `${ROOT}/tools`;
    const r = await bash(
      `cd /tmp && cd "${cwd}" && . ${source} && echo "$CAIRN_ROOT|$PWD|$OLDPWD|$(pwd)"`,
      cwd,
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.trim(), `${ROOT}|${cwd}|/tmp|${cwd}`, source);
  }
});

Deno.test("a working directory that cannot be re-entered stops the launcher, nothing run from elsewhere", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-launcher-gone-" });
  // The shell stands in a directory that is removed under it; bootstrap.sh leaves it to find the
  // repository and cannot come back.
  const r = await bash(
    `mkdir "${dir}/gone" && cd "${dir}/gone" && rmdir "${dir}/gone" && ` +
      `"$CAIRN_TEST_ROOT/cairn" plan check plans/talos-v1.14.2.yaml; echo "exit=$?"`,
    dir,
  );
  await Deno.remove(dir, { recursive: true });
  ok(r.stdout.includes("exit=3"), r.stdout + r.stderr);
  ok(r.stderr.includes("cairn: cannot return to"), r.stderr);
  ok(!r.stdout.includes("ok plans/"), r.stdout);
});
