import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { command } from "../../src/cli/plan_check.ts";
import { checkPlanFile } from "../../src/app/plan_check_run.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));

async function run(argv: string[]) {
  let stdout = "", stderr = "";
  const io: CommandIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    cwd: ROOT,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout, stderr };
}

const NOW = ["--now", "2026-11-25T00:00:00Z"];

Deno.test("plan check exits 0 on the example plans and prints their identity", async () => {
  const files = [...Deno.readDirSync(`${ROOT}plans`)].map((e) => `plans/${e.name}`)
    .filter((f) => f.endsWith(".yaml")).sort();
  const r = await run([...files, ...NOW]);
  assertEquals([r.code, r.stderr], [0, ""]);
  assert(
    /^ok plans\/talos-v1\.14\.2\.yaml TalosUpgrade talos-v1\.14\.2 sha256:[0-9a-f]{64} \(7 nodes\)$/m
      .test(r.stdout),
    r.stdout,
  );
  assertEquals(r.stdout.trim().split("\n").length, files.length);
});

Deno.test("plan check exits 1 and names file, line, column and reason of an invalid plan", async () => {
  const file = "fixtures/plans/invalid/MissingIntermediatePatch--from-1.13.5.yaml";
  const r = await run([file, ...NOW]);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  const expect = (await Deno.readTextFile(`${ROOT}${file}`)).split("\n")[0]!.slice(
    "# expect: ".length,
  );
  assert(r.stderr.startsWith(`${file}:${expect}: MissingIntermediatePatch: `), r.stderr);
});

Deno.test("plan check --output json reports each file with its problems", async () => {
  const r = await run([
    "plans/talos-v1.14.2.yaml",
    "fixtures/plans/invalid/SkippedMinor--1.13-to-1.15.yaml",
    "--output",
    "json",
    ...NOW,
  ]);
  assertEquals(r.code, 1);
  const out = JSON.parse(r.stdout);
  assertEquals(out.map((x: { ok: boolean }) => x.ok), [true, false]);
  assertEquals(out[1].problems[0].reason, "SkippedMinor");
  assertEquals(out[0].nodes, 7);
});

Deno.test("plan check --catalogue overrides the bound catalogue and still checks its digest", async () => {
  const r = await run([
    "plans/talos-v1.14.2.yaml",
    "--catalogue",
    "fixtures/plans/catalogues/stale.yaml",
    ...NOW,
  ]);
  assertEquals(r.code, 1);
  assert(r.stderr.includes("CatalogueDigestMismatch"), r.stderr);
});

Deno.test("plan check refuses a malformed --now as a usage error", async () => {
  let threw = false;
  try {
    await run(["plans/talos-v1.14.2.yaml", "--now", "yesterday"]);
  } catch (e) {
    threw = e instanceof Error && e.name === "UsageError";
  }
  assert(threw);
});

/**
 * The bound-path attacks that only a file system can express, in a throwaway repository holding
 * the example plan and its bound files: each is refused with its reason at the bound path's
 * line, quickly, and nothing is read through the link (a /dev/zero read would never end).
 */
Deno.test("plan check refuses bound files through symlinks, FIFOs and over the cap, located", async () => {
  const base = await Deno.makeTempDir({ prefix: "cairn-plan-check-" });
  const repoRoot = join(base, "repo");
  const files = [
    "plans/talos-v1.14.2.yaml",
    "catalogue/talos.yaml",
    "policies/home-ops.yaml",
    "evidence/upgrade-order.yaml",
  ];
  const reset = async () => {
    await Deno.remove(repoRoot, { recursive: true }).catch(() => {});
    await Deno.mkdir(join(repoRoot, ".git"), { recursive: true });
    for (const f of files) {
      await Deno.mkdir(dirname(join(repoRoot, f)), { recursive: true });
      await Deno.copyFile(`${ROOT}${f}`, join(repoRoot, f));
    }
  };
  const check = async () => {
    let stderr = "";
    const io: CommandIO = {
      stdout: () => {},
      stderr: (t) => void (stderr += t),
      env: {},
      cwd: repoRoot,
      color: false,
      tty: false,
      signal: new AbortController().signal,
    };
    const code = await command.run(parseCommandArgs(command, [files[0]!, ...NOW]), io);
    return { code, stderr };
  };
  const lineOf = async (text: string) =>
    (await Deno.readTextFile(`${ROOT}${files[0]}`)).split("\n").findIndex((l) => l.includes(text)) +
    1;
  try {
    await Deno.writeTextFile(join(base, "outside.yaml"), "cluster: home-ops\n");
    await reset();
    assertEquals((await check()).code, 0, "the copied repository checks clean");
    const attacks: [string, string, () => Promise<void>][] = [
      ["catalogue/talos.yaml", "BoundPathSymlink", async () => {
        await Deno.remove(join(repoRoot, "catalogue/talos.yaml"));
        await Deno.symlink("/dev/zero", join(repoRoot, "catalogue/talos.yaml"));
      }],
      ["policies/home-ops.yaml", "BoundPathSymlink", async () => {
        await Deno.remove(join(repoRoot, "policies/home-ops.yaml"));
        await Deno.symlink(join(base, "outside.yaml"), join(repoRoot, "policies/home-ops.yaml"));
      }],
      ["policies/home-ops.yaml", "BoundPathSymlink", async () => {
        await Deno.remove(join(repoRoot, "policies"), { recursive: true });
        await Deno.symlink(base, join(repoRoot, "policies"));
      }],
      ["evidence/upgrade-order.yaml", "BoundFileNotRegular", async () => {
        await Deno.remove(join(repoRoot, "evidence/upgrade-order.yaml"));
        const mk = await new Deno.Command("mkfifo", {
          args: [join(repoRoot, "evidence/upgrade-order.yaml")],
        }).output();
        assert(mk.success);
      }],
      ["policies/home-ops.yaml", "BoundFileTooLarge", async () => {
        await Deno.writeFile(
          join(repoRoot, "policies/home-ops.yaml"),
          new Uint8Array(64 * 1024 * 1024),
        );
      }],
    ];
    for (const [path, reason, arm] of attacks) {
      await reset();
      await arm();
      const started = Date.now();
      const r = await check();
      const took = Date.now() - started;
      assertEquals(r.code, 1, `${reason} ${path}`);
      const line = await lineOf(`path: ${path}`);
      assert(
        r.stderr.startsWith(`${files[0]}:${line}:11: ${reason}: `),
        `${reason} ${path}: ${r.stderr}`,
      );
      assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert(took < 2_000, `${reason} ${path}: took ${took} ms`);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("plan check refuses a plan file that is a link to /dev/zero, a FIFO or oversized, without reading it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-plan-file-" });
  try {
    await Deno.symlink("/dev/zero", join(dir, "zero.yaml"));
    const mk = await new Deno.Command("mkfifo", { args: [join(dir, "fifo.yaml")] }).output();
    assert(mk.success);
    await Deno.writeFile(join(dir, "big.yaml"), new Uint8Array(8 * 1024 * 1024));
    const cases: [string, string][] = [
      ["zero.yaml", "FileUnreadable"],
      ["fifo.yaml", "FileUnreadable"],
      ["big.yaml", "PlanTooLarge"],
    ];
    for (const [name, reason] of cases) {
      const started = Date.now();
      const r = await checkPlanFile(join(dir, name), {
        nowMs: Date.parse("2026-11-25T00:00:00Z"),
        cwd: dir,
      });
      assertEquals(r.problems.map((p) => p.reason), [reason], name);
      assert(Date.now() - started < 2_000, `${name}: took ${Date.now() - started} ms`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
