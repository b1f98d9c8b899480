/**
 * Crash campaign (issue 5): the controller process is killed with SIGKILL at every journal write
 * point of a rollout, each in its own run against a fresh twin, then a new controller instance
 * starts on the same journal file. After each run: no node received a second install or a
 * second reboot, every operation with an unaccounted attempt is `unresolved`, and no uncordon
 * happened without the operation's own cordon.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { cryptoIdSource } from "../../../src/adapters/journal/ids.ts";
import {
  startTwinProcess,
  TEST_PKI_CACHE,
  type TwinProcess,
} from "../../../src/app/twin_process.ts";
import { TwinControl } from "../../../src/sim/twin_control.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const CHILD = join(ROOT, "test/engine/executor/crash_rollout_child.ts");
const NODES = "worker-2";

async function startTwin(): Promise<TwinProcess> {
  return await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
}

/** Runs the child; resolves with its stdout lines once it prints `waiting` (then kills it) or exits. */
async function runChild(
  twin: TwinProcess,
  journal: string,
  target: string,
  owner: string,
): Promise<{ lines: string[]; killed: boolean; code: number }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, join(twin.stateDir, "twin.json"), journal, target, owner, NODES],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines: string[] = [];
  let killed = false;
  let buf = "";
  const dec = new TextDecoder();
  for await (const chunk of child.stdout) {
    buf += dec.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      if (line.startsWith("waiting ")) {
        child.kill("SIGKILL");
        killed = true;
      }
    }
  }
  const { code } = await child.status;
  await child.stdin.close().catch(() => {});
  return { lines, killed, code };
}

async function checkInvariants(twin: TwinProcess, journalFile: string, label: string) {
  const stats = await new TwinControl(twin.controlUrl).stats();
  for (const [node, calls] of Object.entries(stats.talos.byNode)) {
    assert((calls["LifecycleService/Upgrade"] ?? 0) <= 1, `${label}: ${node} installed twice`);
    assert((calls["MachineService/Reboot"] ?? 0) <= 1, `${label}: ${node} rebooted twice`);
  }
  const j = await openJournal({ url: `file:${journalFile}`, ids: cryptoIdSource(), nowMs: 0 });
  try {
    for (const op of await j.listOperations()) {
      const d = (await j.showOperation(op.id))!;
      const unaccounted = d.attempts.some((a) => a.accountedBy === null);
      if (unaccounted) {
        assertEquals(op.state, "unresolved", `${label}: ${op.machine} has an unaccounted attempt`);
      }
      assert(
        ["completed", "unresolved", "failed"].includes(op.state),
        `${label}: ${op.machine} is ${op.state}`,
      );
      const cordonedByUs = d.phases.some((p) =>
        p.phase === "cordon" && p.kind === "fact" && p.detail.includes('"cordonedByOperation":true')
      );
      if (d.attempts.some((a) => a.phase === "uncordon")) {
        assert(cordonedByUs, `${label}: uncordon without own cordon`);
      }
    }
    assertEquals((await j.verifyChain()).ok, true, `${label}: journal chain broken`);
  } finally {
    await j.close();
  }
}

Deno.test({
  name:
    "crash campaign: killed at every journal write point, a new controller never re-installs, re-reboots or loses an attempt",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "cairn-crash-" });
    // A clean run lists the write points of the rollout.
    const listTwin = await startTwin();
    let points: string[];
    try {
      const clean = await runChild(listTwin, join(dir, "list.db"), "none", "ctl_a");
      assertEquals(clean.code, 0);
      assert(clean.lines.includes("done"));
      points = clean.lines.filter((l) => l.startsWith("point ")).map((l) => l.split(" ")[2]!);
      await checkInvariants(listTwin, join(dir, "list.db"), "clean run");
    } finally {
      await listTwin.stop();
    }
    assert(points.length > 10, `expected many write points, got ${points.length}`);
    for (let k = 1; k <= points.length; k++) {
      const twin = await startTwin();
      const label = `kill at point ${k} (${points[k - 1]})`;
      try {
        const file = join(dir, `run-${k}.db`);
        const a = await runChild(twin, file, String(k), "ctl_a");
        assert(
          a.killed,
          `${label}: the child never reached the point; it printed:\n${
            a.lines.slice(-6).join("\n")
          }`,
        );
        const b = await runChild(twin, file, "none", "ctl_b");
        assertEquals(b.code, 0, `${label}: the restarted controller failed`);
        await checkInvariants(twin, file, label);
      } finally {
        await twin.stop();
      }
    }
  },
});
