/** A person at a terminal sees where a run is: node i/n, phase, elapsed, redrawn in place. */
import { ok as assert } from "node:assert/strict";
import { dispatch } from "../../src/cli/dispatch.ts";
import { ROOT } from "../_helpers/cli_run.ts";

Deno.test("cairn rehearse on a terminal shows each node's phases, then the outcome", async () => {
  const out = await Deno.makeTempDir();
  let stderr = "";
  try {
    const code = await dispatch(["rehearse", "plans/talos-v1.14.2.yaml", "--out", out], {
      stdout: () => {},
      stderr: (t) => void (stderr += t),
      env: {},
      cwd: ROOT,
      color: false,
      tty: true,
      signal: new AbortController().signal,
    });
    assert(code === 0, stderr);
    const screen = stderr.replaceAll("\r\x1b[2K", "\n");
    assert(/\[1\/7\] worker-1 drain \d\d:\d\d:\d\d/.test(screen), screen.slice(0, 400));
    assert(/\[7\/7\] \S+ /.test(screen), "the last node's phases are shown");
    assert(/rollout completed \(\d\d:\d\d:\d\d\)\n/.test(screen), screen.slice(-200));
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
