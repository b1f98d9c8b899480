/**
 * `cairn rehearse` refuses what would rehearse nothing, before the twin starts: a fault aimed at
 * a node the plan does not have (usage error listing the plan's nodes), a fault node with no fault and a plan for another
 * cluster than the twin's description (ClusterIdentityMismatch naming both).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../_helpers/twin_world.ts";

async function cairn(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "src/main.ts"), ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

const PLAN = join(ROOT, "plans/talos-v1.14.2.yaml");

Deno.test("cairn rehearse --fault-node without --fault exits 2: a clean run is no fault drill", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-rehearse-" });
  try {
    const r = await cairn(["rehearse", PLAN, "--fault-node", "worker-1"], dir);
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes("--fault-node aims the faults of --fault NAME; no --fault"), r.stderr);
    assertEquals(r.stdout, "");
    assertEquals([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn rehearse --fault-node with no such node exits 2 listing the plan's nodes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-rehearse-" });
  try {
    const r = await cairn(
      ["rehearse", PLAN, "--fault", "drain-timeout", "--fault-node", "cp-9"],
      dir,
    );
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes("--fault-node cp-9: no such node in plan talos-v1.14.2"), r.stderr);
    assert(
      r.stderr.includes("worker-1, worker-2, worker-3, worker-4, cp-1, cp-2, cp-3"),
      r.stderr,
    );
    assertEquals(r.stdout, "");
    // Nothing ran: no report written, no journal announced.
    assertEquals([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn rehearse refuses a plan for another cluster than the twin describes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-rehearse-" });
  try {
    const r = await cairn([
      "rehearse",
      PLAN,
      "--cluster",
      join(ROOT, "fixtures/clusters/talos-mini.yaml"),
    ], dir);
    assertEquals(r.code, 1, r.stderr);
    assert(r.stderr.includes("ClusterIdentityMismatch"), r.stderr);
    assert(r.stderr.includes("the plan is for cluster home-ops"), r.stderr);
    assert(r.stderr.includes("describes talos-mini"), r.stderr);
    assertEquals([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
