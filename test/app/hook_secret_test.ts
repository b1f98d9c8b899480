import { deepStrictEqual as assertEquals, rejects } from "node:assert/strict";
import { join } from "node:path";
import { readHookSecret } from "../../src/app/reconcile_wiring.ts";

Deno.test("readHookSecret() refuses an unreadable or empty secret (never running unauthenticated)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-hook-secret-" });
  try {
    const path = join(dir, "secret");
    const refused = (e: { reason?: string; message?: string }) =>
      e.reason === "ConfigInvalid" && (e.message ?? "").includes(path);
    await rejects(readHookSecret(path), refused, "missing file");
    for (const text of ["", "\n", "  \t\n"]) {
      await Deno.writeTextFile(path, text);
      await rejects(readHookSecret(path), refused, JSON.stringify(text));
    }
    await Deno.writeTextFile(path, "  s3cret-value\n");
    assertEquals(await readHookSecret(path), "s3cret-value");
    // A directory is unreadable as a file: refused, and the message never quotes content.
    await rejects(readHookSecret(dir), (e: Error) => !e.message.includes("s3cret"));
    // Not a regular file, or too large to be a secret: refused without reading it all.
    await rejects(
      readHookSecret("/dev/zero"),
      (e: { reason?: string }) => e.reason === "ConfigInvalid",
    );
    await Deno.writeTextFile(path, "x".repeat(5000));
    await rejects(readHookSecret(path), refused, "oversized");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
