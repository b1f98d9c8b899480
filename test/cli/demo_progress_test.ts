/**
 * `cairn demo` on a terminal shows the execution live, as apply and rehearse do: one status line
 * redrawn in place (node i/n, phase, the twin's elapsed time, what it waits for), the demo's own
 * lines kept above it, then the summary. Run in a real pseudo-terminal (`script`, util-linux);
 * the fault halts the rollout at its first node so the run stays short. Off a terminal the same
 * phases are JSON lines (asserted on the full demo in test/e2e/reconcile_test.ts).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../_helpers/cli_run.ts";

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

Deno.test("cairn demo on a terminal redraws a status line per phase and keeps its lines above it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-demo-tty-" });
  try {
    const demo = [Deno.execPath(), "run", "--quiet", "-A", join(ROOT, "src/main.ts"), "demo"]
      .concat(["--fault", "reboot-response-lost", "--dir", dir]).map(quote).join(" ");
    // `script` gives the command a pseudo-terminal 90 columns wide; -e returns its exit code.
    const out = await new Deno.Command("script", {
      args: ["-qec", `stty cols 90 rows 40; exec ${demo}`, "/dev/null"],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const screen = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, screen.slice(-2000));
    // Each redraw clears the line first; split on it to see the successive status lines.
    const frames = screen.split("\r\x1b[2K").map((f) => f.replace(/\r?\n$/, ""));
    const status = frames.filter((f) => /^\[\d\/7\] /.test(f));
    assert(
      status.some((f) =>
        /^\[1\/7\] worker-1 drain \d\d:\d\d:\d\d · waiting for the node's pods evicted/.test(f)
      ),
      status.slice(0, 12).join("\n"),
    );
    assert(
      status.some((f) =>
        /^\[1\/7\] worker-1 reboot \d\d:\d\d:\d\d · waiting for the node to/.test(f)
      ),
      status.join("\n"),
    );
    // A status line never wraps: it is cut to the 90 columns (one kept for the cursor).
    assert(status.every((f) => [...f.split("\n")[0]!].length <= 89), status.join("\n"));
    // The demo's own lines are printed above the status line, never glued to it.
    assert(/\nMerged plan\/talos-v1\.14\.2 into main/.test(screen.replaceAll("\r\n", "\n")));
    assert(/rollout unresolved \(\d\d:\d\d:\d\d\)\r?\n/.test(screen), screen.slice(-1500));
    assert(screen.includes("Outcome:          unresolved (fault: reboot-response-lost)"));
    assert(!screen.includes('{"event":"phase"'), "no JSON lines on a terminal");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Ctrl-C stops cairn demo promptly, with its summary and the run kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-demo-int-" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", join(ROOT, "src/main.ts"), "demo", "--dir", dir],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const err = { text: "" };
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const c of child.stderr) err.text += decoder.decode(c, { stream: true });
    })();
    const stdout = new Response(child.stdout).text();
    // Off a terminal the phases arrive as JSON lines: interrupt once the rollout is under way.
    const deadline = Date.now() + 180_000; // a bound for a loaded machine, not a timing
    while (!err.text.includes('"phase":"install"')) {
      assert(Date.now() < deadline, `the rollout never started:\n${err.text.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGINT");
    const status = await child.status;
    await reading;
    const out = await stdout;
    assertEquals(status.code, 1, err.text.slice(-2000));
    assert(out.includes("Outcome:"), out);
    assert(err.text.includes(`cairn demo: interrupted; the run stopped where it was`), err.text);
    assert(err.text.includes(`kept in ${dir}`), err.text.slice(-500));
    // The run is kept where it stopped: the execution report and the journal.
    assert(out.includes("  local copy:     "), out);
    assert((await Deno.readTextFile(join(dir, "execution.md"))).includes("**Verdict: "));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Ctrl-C before the rollout: no empty report stands in for one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-demo-int0-" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", join(ROOT, "src/main.ts"), "demo", "--dir", dir],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const seen = { text: "" };
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const c of child.stdout) seen.text += decoder.decode(c, { stream: true });
    })();
    const stderr = new Response(child.stderr).text();
    const deadline = Date.now() + 180_000; // a bound for a loaded machine, not a timing
    while (!seen.text.includes("Pinned evidence:")) {
      assert(Date.now() < deadline, `the demo never got going:\n${seen.text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGINT");
    const status = await child.status;
    await reading;
    const err = await stderr;
    assertEquals(status.code, 1, err.slice(-1500));
    assert(err.includes("cairn demo: interrupted"), err.slice(-1500));
    // Wherever the stop landed, a local copy is named only when a report was committed.
    const copy = await Deno.readTextFile(join(dir, "execution.md")).catch(() => undefined);
    if (seen.text.includes("  local copy:     ")) assert(copy?.includes("**Verdict: "), copy);
    else {
      assertEquals(copy, undefined);
      assert(seen.text.includes("Execution report: none committed"), seen.text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
