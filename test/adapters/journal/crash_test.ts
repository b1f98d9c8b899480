/**
 * Crash tests: a child process is killed with SIGKILL at every write point of a commitment, an
 * attempt and a takeover (a stdout handshake, no sleeps). The journal must then open, verify, and
 * hold either the whole transaction or none of it. On a libSQL file and on PostgreSQL (where the
 * server rolls back the dead client's open transaction).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";
import {
  type JournalStoreKind,
  LIBSQL_FILE,
  postgresStore,
} from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const CHILD = new URL("./crash_child.ts", import.meta.url).pathname;
const SCENARIOS = ["commit", "attempt", "takeover"] as const;
type Scenario = (typeof SCENARIOS)[number];

/** Runs the child until it prints `stopLine` (then SIGKILLs it) or exits; returns its lines. */
async function runChild(args: string[], stopLine: string | null): Promise<string[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines: string[] = [];
  let buf = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    if (stopLine !== null && lines.includes(stopLine)) {
      child.kill("SIGKILL");
      break;
    }
  }
  await reader.cancel().catch(() => undefined);
  const status = await child.status;
  await child.stdin.close().catch(() => undefined);
  if (stopLine !== null) assertEquals(status.signal, "SIGKILL", `child exited: ${lines}`);
  else assertEquals(status.code, 0, lines.join("\n"));
  return lines;
}

/** What a scenario's transaction leaves: "none" or "whole"; throws on anything partial. */
async function outcome(j: Journal, s: Scenario): Promise<"none" | "whole"> {
  const ops = await j.listOperations();
  const kinds = (await j.events()).map((e) => e.kind);
  const count = (k: string) => kinds.filter((x) => x === k).length;
  if (s === "commit") {
    const whole = ops.length === 1 && count("commitment") === 1;
    const none = ops.length === 0 && count("commitment") === 0;
    assert(whole || none, `partial commitment: ${ops.length} ops, ${count("commitment")} events`);
    return whole ? "whole" : "none";
  }
  assertEquals(ops.length, 1);
  const op = ops[0]!;
  if (s === "attempt") {
    const atts = (await j.showOperation(op.id))!.attempts.length;
    const whole = op.state === "sending" && op.attemptsUsed === 1 && atts === 1 &&
      count("attempt") === 1;
    const none = op.state === "committed" && op.attemptsUsed === 0 && atts === 0 &&
      count("attempt") === 0;
    assert(whole || none, `partial attempt: ${op.state} used ${op.attemptsUsed} rows ${atts}`);
    return whole ? "whole" : "none";
  }
  const whole = op.ownerGen === 2 && op.state === "unresolved" && count("ownership") === 1;
  const none = op.ownerGen === 1 && op.state === "committed" && count("ownership") === 0;
  assert(whole || none, `partial takeover: gen ${op.ownerGen} ${op.state}`);
  return whole ? "whole" : "none";
}

const STORES: readonly JournalStoreKind[] = [LIBSQL_FILE, postgresStore(await sharedPostgres())];

for (const store of STORES) {
  Deno.test(`${store.name}: SIGKILL at every write point leaves each transaction whole or absent`, async () => {
    const made: (() => Promise<void>)[] = [];
    const fresh = async () => {
      const f = await store.fresh();
      made.push(f.dispose);
      return f.url;
    };
    try {
      for (const s of SCENARIOS) {
        const points = (await runChild([await fresh(), s, "list"], null))
          .filter((l) => l.startsWith("point ")).map((l) => l.slice(6));
        assert(points.includes(`${s}:before-commit`) && points.includes(`${s}:after-commit`));
        for (const p of points) {
          const url = await fresh();
          await runChild([url, s, p], `waiting ${p}`);
          const j = await openJournal({ url, ids: counterIds("v"), nowMs: T0, migrate: false });
          try {
            const chain = await j.verifyChain();
            assert(chain.ok, `${s} killed at ${p}: chain broken`);
            const got = await outcome(j, s);
            // Everything before the commit point is rolled back; after it, durable.
            assertEquals(got, p.endsWith("after-commit") ? "whole" : "none", `${s} at ${p}`);
          } finally {
            await j.close();
          }
        }
      }
    } finally {
      for (const d of made) await d();
    }
  });
}
