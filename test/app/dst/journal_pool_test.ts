/**
 * The campaign's seeds take their in-memory journals from a pool (`MemoryJournalPool`): a seed on
 * a database a closed journal gave back runs exactly as on a new one. Seeds with a crash, a
 * journal restore, stale reads and every plan kind, run in turn on one pool (each seed's journal
 * is the previous one's database), give the same results as on fresh databases.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { MemoryJournalPool } from "../../../src/adapters/journal/libsql_journal.ts";
import { runSeed, type SeedResult } from "../../../src/app/dst/run_seed.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));

// ci seeds drawing, between them, every kind, crashes, restores, stale reads and an operator's cordon.
const SEEDS = [2, 7, 12, 16, 24, 30, 27, 34];

Deno.test("dst: seeds on pooled journals run as on fresh ones", async () => {
  const pool = new MemoryJournalPool();
  try {
    const pooled: SeedResult[] = [];
    for (const seed of SEEDS) {
      pooled.push(await runSeed({ seed, catalogue, profile: "ci", journals: pool }));
    }
    const fresh: SeedResult[] = [];
    for (const seed of SEEDS) {
      fresh.push(await runSeed({ seed, catalogue, profile: "ci", journals: "fresh" }));
    }
    const kinds = new Set<string>(pooled.flatMap((r) => r.events.map((e) => e.kind)));
    for (const k of ["crash", "restore", "stale", "operator-cordon"]) assert(kinds.has(k), k);
    assertEquals(new Set(pooled.map((r) => r.kind)).size, 4);
    assertEquals(pooled, fresh);
  } finally {
    pool.close();
  }
});
