/** A person at a terminal sees where a run is: node i/n, phase, elapsed, redrawn in place. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
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

Deno.test("off a terminal each phase is one JSON line on stderr, with elapsed time", async () => {
  const { phaseOutput } = await import("../../src/cli/phase_output.ts");
  let stderr = "";
  let now = 1_000;
  const out = await phaseOutput({
    stdout: () => {},
    stderr: (t) => void (stderr += t),
    env: {},
    cwd: ROOT,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  }, { now: () => now } as never);
  now += 5_000;
  out.onPhase({ node: "worker-1", index: 1, total: 3, phase: "drain" });
  out.done("rollout completed");
  const lines = stderr.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert(lines.length === 1, stderr);
  const [line] = lines;
  assert(
    line.event === "phase" && line.node === "worker-1" && line.index === 1 &&
      line.total === 3 && line.phase === "drain" && line.elapsedMs === 5_000,
    stderr,
  );
});

Deno.test("on a terminal a rehearsal's log lines go above the status line, never glued to it", async () => {
  const out = await Deno.makeTempDir();
  let stderr = "";
  try {
    const code = await dispatch(
      ["rehearse", "plans/talos-v1.14.2.yaml", "--fault", "reboot-response-lost", "--out", out],
      {
        stdout: () => {},
        stderr: (t) => void (stderr += t),
        env: {},
        cwd: ROOT,
        color: false,
        tty: true,
        signal: new AbortController().signal,
      },
    );
    assert(code === 1, stderr.slice(-500)); // the fault's expected halt
    // The executor warns when the operation ends unresolved: a JSON log line of its own.
    assert(stderr.includes('"msg":"operation unresolved"'), stderr.slice(-800));
    const screen = stderr.replaceAll("\r\x1b[2K", "\n");
    for (const m of screen.matchAll(/\{"time"/g)) {
      assert(
        screen[m.index! - 1] === "\n",
        screen.slice(Math.max(0, m.index! - 120), m.index! + 40),
      );
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("on a terminal a real-clock run's status line ticks until done, then stops", async () => {
  const { phaseOutput } = await import("../../src/cli/phase_output.ts");
  let stderr = "";
  const clock = { now: () => now } as never;
  let now = 0;
  const out = await phaseOutput(
    {
      stdout: () => {},
      stderr: (t) => void (stderr += t),
      env: {},
      cwd: ROOT,
      color: false,
      tty: true,
      signal: new AbortController().signal,
    },
    clock,
    { tickMs: 5 },
  );
  out.onPhase({ node: "worker-1", index: 1, total: 3, phase: "drain", waiting: "pods" });
  now = 42_000; // the step waits; no new phase arrives
  const deadline = Date.now() + 20_000; // a bound for a loaded machine, not a timing
  while (!stderr.includes("[1/3] worker-1 drain 00:00:42")) {
    assert(Date.now() < deadline, JSON.stringify(stderr));
    await new Promise((r) => setTimeout(r, 10));
  }
  out.done("rollout completed");
  assert(stderr.endsWith("rollout completed (00:00:42)\n"), JSON.stringify(stderr.slice(-80)));
  // Done stops the ticking: nothing is drawn after the summary (a late tick could only make
  // this pass by accident under load, never fail it).
  const ended = stderr.length;
  await new Promise((r) => setTimeout(r, 100));
  assertEquals(stderr.length, ended, JSON.stringify(stderr.slice(ended)));
});
