/**
 * Commands that only read the journal never create one: a mistyped path is refused with
 * JournalMissing and leaves no file behind. And an export piped into `head` ends quietly.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { ROOT, runCli } from "../_helpers/cli_run.ts";

for (const cmd of [["status"], ["journal", "show"], ["journal", "export"], ["journal", "verify"]]) {
  Deno.test(`cairn ${cmd.join(" ")} on a missing journal refuses and creates nothing`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      for (const location of [join(dir, "typo.db"), `file:${join(dir, "typo2.db")}`]) {
        const r = await runCli([...cmd, "--journal", location]);
        assertEquals(r.code, 1, r.stderr);
        assert(r.stderr.startsWith("JournalMissing: no journal at "), r.stderr);
      }
      assertEquals([...Deno.readDirSync(dir)], [], "a read-only command created a file");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("cairn journal export | head ends with exit 0 and nothing on stderr", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "j.db");
    assertEquals((await runCli(["journal", "migrate", "--journal", db])).code, 0);
    const out = await new Deno.Command("bash", {
      args: [
        "-c",
        `{ sleep 0.3; ./cairn journal export --journal '${db}'; echo "rc=$?" >&2; } | true`,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(new TextDecoder().decode(out.stderr), "rc=0\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
