// The reconciler runs with the heap settings its memory figure was measured with, wherever it is
// started: the image, the launcher (and so the systemd unit), and the benchmark's probe.
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { COMMAND_V8_FLAGS, RECONCILER_V8_FLAGS } from "../../src/app/reconciler_heap.ts";

const root = new URL("../../", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, root));

Deno.test("the image sets the reconciler's heap flags", () => {
  const env = read("deploy/Containerfile").split("\n")
    .filter((l) => l.startsWith("ENV DENO_V8_FLAGS="));
  assertEquals(env, [`ENV DENO_V8_FLAGS=${RECONCILER_V8_FLAGS}`]);
});

Deno.test("the launcher sets them for `cairn reconcile`, the full young generation for the rest, unless the caller has its own", async () => {
  const flagsOf = async (args: string[], env: Record<string, string> = {}) => {
    // The launcher's own lines up to its exec, with the exec replaced by a print.
    const script = read("cairn").replace(/^\. .*bootstrap\.sh.*$/m, "")
      .replace(/^exec .*$/m, 'printf "%s" "${DENO_V8_FLAGS:-}"');
    const out = await new Deno.Command("bash", {
      args: ["-c", script, "cairn", ...args],
      env,
      clearEnv: true,
      stdout: "piped",
    }).output();
    assert(out.success);
    return new TextDecoder().decode(out.stdout);
  };
  assertEquals(await flagsOf(["reconcile", "--config", "x"]), RECONCILER_V8_FLAGS);
  assertEquals(await flagsOf(["plan", "check"]), COMMAND_V8_FLAGS);
  assertEquals(await flagsOf([]), COMMAND_V8_FLAGS);
  assertEquals(await flagsOf(["reconcile"], { DENO_V8_FLAGS: "--own" }), "--own");
  assertEquals(await flagsOf(["plan", "check"], { DENO_V8_FLAGS: "--own" }), "--own");
});

Deno.test("the memory benchmark's probe runs with them", () => {
  assert(read("bench/reconciler_memory_bench.ts").includes("${RECONCILER_V8_FLAGS}"));
});
