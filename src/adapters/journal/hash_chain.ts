/** The event timeline's SHA-256 hash chain: append under the write lock, recompute to verify. */
import { createHash } from "node:crypto";
import type { Transaction } from "kysely";
import type { ChainCheck, JournalEvent } from "../../ports/journal.ts";
import type { EventTable, JournalDB } from "./schema.ts";
import { insertRow, shape } from "./compiled.ts";

/** The `prev_hash` of the first row. */
export const GENESIS_HASH = "0".repeat(64);

/** JSON with object keys sorted at every level, so the same row always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/**
 * SHA-256 of `text` (UTF-8), hex. Synchronous on purpose: every journal act hashes an event inside
 * its write transaction, and the asynchronous WebCrypto digest hops through a worker and back,
 * which costs more than the hash itself while the write lock is held (issue 18).
 */
function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The hash of a row: SHA-256 over the previous hash and the row's canonical JSON. */
export function rowHash(row: Omit<EventTable, "hash">): Promise<string> {
  const { prev_hash, ...rest } = row;
  return Promise.resolve(sha256Hex(prev_hash + canonicalJson(rest)));
}

/** Fields of a new event; `seq`, hashes and the epoch are filled in by `appendEvent`. */
export interface NewEvent {
  readonly atMs: number;
  readonly kind: string;
  readonly machine?: string | null;
  readonly revision?: number | null;
  readonly operationId?: string | null;
  readonly epoch: string;
  readonly actor: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** The last row's seq and hash, read inside the write transaction. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

const HEAD = shape(
  [],
  (tx) => tx.selectFrom("events").select(["seq", "hash"]).orderBy("seq", "desc").limit(1),
);

const INSERT_EVENT = insertRow("events", [
  "seq",
  "at_ms",
  "kind",
  "machine",
  "revision",
  "operation_id",
  "epoch",
  "actor",
  "body",
  "prev_hash",
  "hash",
]);

/**
 * Appends one event inside `tx` (the caller holds the write transaction). `head` may come from a
 * statement the caller already ran in the same transaction.
 */
export async function appendEvent(
  tx: Transaction<JournalDB>,
  e: NewEvent,
  head?: ChainHead | null,
): Promise<number> {
  const last = head !== undefined ? head : await HEAD.first(tx, {});
  const row: Omit<EventTable, "hash"> = {
    seq: (last?.seq ?? 0) + 1,
    at_ms: e.atMs,
    kind: e.kind,
    machine: e.machine ?? null,
    revision: e.revision ?? null,
    operation_id: e.operationId ?? null,
    epoch: e.epoch,
    actor: e.actor,
    body: canonicalJson(e.body),
    prev_hash: last?.hash ?? GENESIS_HASH,
  };
  await INSERT_EVENT.execute(tx, { ...row, hash: await rowHash(row) });
  return row.seq;
}

/** Converts a stored row to the port's shape. */
export function toEvent(r: EventTable): JournalEvent {
  return {
    seq: r.seq,
    atMs: r.at_ms,
    kind: r.kind,
    machine: r.machine,
    revision: r.revision,
    operationId: r.operation_id,
    epoch: r.epoch,
    actor: r.actor,
    body: r.body,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** Recomputes the chain over `rows` (in seq order) and names the first row that breaks it. */
export async function checkChain(rows: readonly EventTable[]): Promise<ChainCheck> {
  let prev = GENESIS_HASH;
  let expectSeq = 1;
  for (const r of rows) {
    if (r.seq !== expectSeq) {
      return { ok: false, seq: r.seq, why: `expected row ${expectSeq}, found row ${r.seq}` };
    }
    if (r.prev_hash !== prev) {
      return { ok: false, seq: r.seq, why: "prev_hash does not match the previous row's hash" };
    }
    const { hash, ...rest } = r;
    if ((await rowHash(rest)) !== hash) {
      return { ok: false, seq: r.seq, why: "row content does not match its hash" };
    }
    prev = hash;
    expectSeq++;
  }
  return { ok: true, rows: rows.length, head: prev };
}
