import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { command } from "../../src/cli/image_resolve.ts";
import { UsageError } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { CairnError } from "../../src/domain/errors.ts";
import { pushImage, pushIndex, startRegistry } from "../adapters/oci/registry_helpers.ts";

async function run(argv: string[]) {
  let stdout = "";
  const io = {
    stdout: (t: string) => void (stdout += t),
    stderr: () => {},
    env: {},
    cwd: ".",
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout };
}

Deno.test("image resolve prints the platform digest and refuses a missing platform", async () => {
  const registry = await startRegistry();
  try {
    const amd = await pushImage(registry.base, "metal-installer/abc", {
      os: "linux",
      architecture: "amd64",
    });
    const index = await pushIndex(registry.base, "metal-installer/abc", "v1.14.2", [
      { descriptor: amd, platform: { os: "linux", architecture: "amd64" } },
    ]);
    const ref = `${registry.host}/metal-installer/abc:v1.14.2`;
    const ok = await run([ref, "--platform", "linux/amd64", "--insecure-http", "--output", "json"]);
    assertEquals(ok.code, 0);
    const out = JSON.parse(ok.stdout);
    assertEquals([out.digest, out.indexDigest], [amd.digest, index.digest]);
    const text = await run([ref, "--platform", "linux/amd64", "--insecure-http"]);
    assert(text.stdout.startsWith(`${registry.host}/metal-installer/abc@${amd.digest}\n`));
    try {
      await run([ref, "--platform", "linux/arm64", "--insecure-http"]);
      assert(false, "must refuse");
    } catch (e) {
      assert(e instanceof CairnError && e.reason === "ImagePlatformMissing");
    }
  } finally {
    await registry.stop();
  }
});

Deno.test("image resolve requires --platform", async () => {
  try {
    await run(["127.0.0.1:1/a:b"]);
    assert(false, "must refuse");
  } catch (e) {
    assert(e instanceof UsageError);
  }
});
