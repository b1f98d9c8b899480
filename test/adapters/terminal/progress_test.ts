import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createProgress, formatElapsed } from "../../../src/adapters/terminal/progress.ts";
import { SimClock } from "../../../src/sim/clock.ts";

function setup(tty: boolean, color: boolean) {
  const out: string[] = [];
  const clock = new SimClock(Date.UTC(2026, 0, 1));
  const p = createProgress({ tty, color, write: (t) => out.push(t), clock });
  return { out, clock, p };
}

Deno.test("progress prints one plain line per change when not on a terminal, with virtual elapsed time", async () => {
  const { out, clock, p } = setup(false, true);
  p.update({ node: "worker-1", index: 1, total: 7, phase: "drain" });
  p.update({ node: "worker-1", index: 1, total: 7, phase: "drain" }); // no change, no line
  await clock.advance(3 * 3600_000 + 62_000);
  p.update({ node: "worker-1", index: 1, total: 7, phase: "reboot" });
  p.done("plan completed");
  assertEquals(out, [
    "[1/7] worker-1 drain 00:00:00\n",
    "[1/7] worker-1 reboot 03:01:02\n",
    "plan completed (03:01:02)\n",
  ]);
  assert(!out.join("").includes("\x1b"), "no escape sequences off a terminal, even with color");
});

Deno.test("progress redraws one line in place on a terminal and keeps notes above it", () => {
  const { out, p } = setup(true, false);
  p.update({ node: "cp-1", index: 5, total: 7, phase: "install" });
  p.update({ node: "cp-1", index: 5, total: 7, phase: "verify" });
  p.note("worker-4 completed");
  p.done("done");
  assertEquals(out, [
    "\r\x1b[2K[5/7] cp-1 install 00:00:00",
    "\r\x1b[2K[5/7] cp-1 verify 00:00:00",
    "\r\x1b[2K",
    "worker-4 completed\n",
    "[5/7] cp-1 verify 00:00:00",
    "\r\x1b[2K",
    "done (00:00:00)\n",
  ]);
  assert(!out.join("").includes("\x1b[1m"), "NO_COLOR (color=false) means no colour codes");
});

Deno.test("progress colours node and phase only on a terminal with colour allowed", () => {
  const { out, p } = setup(true, true);
  p.update({ node: "cp-2", index: 6, total: 7, phase: "drain" });
  assert(out[0]!.includes("\x1b[1mcp-2\x1b[0m") && out[0]!.includes("\x1b[36mdrain\x1b[0m"));
});

Deno.test("progress neutralises control characters in node names", () => {
  const { out, p } = setup(false, false);
  p.update({ node: "evil\x1b]0;pwned\x07", index: 1, total: 1, phase: "gate" });
  assertEquals(out, ["[1/1] evil?]0;pwned? gate 00:00:00\n"]);
});

Deno.test("formatElapsed() renders hh:mm:ss and lets hours grow", () => {
  assertEquals(formatElapsed(0), "00:00:00");
  assertEquals(formatElapsed(59_999), "00:00:59");
  assertEquals(formatElapsed(100 * 3600_000), "100:00:00");
});

Deno.test("on a terminal the status line says what the run waits for, cut to the terminal's width", () => {
  const out: string[] = [];
  const clock = new SimClock(Date.UTC(2026, 0, 1));
  const p = createProgress({
    tty: true,
    color: true,
    write: (t) => out.push(t),
    clock,
    columns: 60,
  });
  const state = { node: "worker-1", index: 1, total: 7, phase: "drain" };
  p.update({ ...state, waiting: "the node's pods evicted (default/web-1: asked)" });
  // deno-lint-ignore no-control-regex
  const visible = out[0]!.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").replace("\r", "");
  assertEquals(visible, "[1/7] worker-1 drain 00:00:00 · waiting for the node's pod…");
  assertEquals([...visible].length, 59); // one column left: a full line would wrap on redraw
  const wide = createProgress({ tty: true, color: false, write: (t) => out.push(t), clock });
  wide.update({ ...state, waiting: "the node marked\x1b[31m unschedulable" });
  assertEquals(
    out[1],
    "\r\x1b[2K[1/7] worker-1 drain 00:00:00 · waiting for the node marked?[31m unschedulable",
  );
});

Deno.test("on a very narrow terminal even the node and phase are cut, so the line never wraps", () => {
  const out: string[] = [];
  const clock = new SimClock(Date.UTC(2026, 0, 1));
  const p = createProgress({
    tty: true,
    color: true,
    write: (t) => out.push(t),
    clock,
    columns: 30,
  });
  p.update({ node: "worker-1", index: 1, total: 7, phase: "health post-gate fail", waiting: "x" });
  const visible = out[0]!.replace("\r\x1b[2K", "");
  assertEquals(visible, "[1/7] worker-1 health post-g…");
  assertEquals([...visible].length, 29);
});

Deno.test("redraw moves the elapsed time on a terminal; release leaves the last line and ends it", async () => {
  const { out, clock, p } = setup(true, false);
  p.update({ node: "cp-1", index: 5, total: 7, phase: "drain" });
  await clock.advance(65_000);
  p.redraw();
  p.release();
  p.redraw(); // released: nothing more is drawn
  assertEquals(out, [
    "\r\x1b[2K[5/7] cp-1 drain 00:00:00",
    "\r\x1b[2K[5/7] cp-1 drain 00:01:05",
    "\n",
  ]);
  const plain = setup(false, false);
  plain.p.update({ node: "cp-1", index: 5, total: 7, phase: "drain" });
  plain.p.redraw();
  assertEquals(plain.out.length, 1); // off a terminal a line is written per change only
});
