/**
 * What the journal's acts need from the database under them (libSQL or PostgreSQL): how a write
 * transaction is serialised against every other writer of the same journal, how a read sees one
 * consistent moment, and how the attempt transaction runs in two round trips. Everything else —
 * the comparisons, the fenced UPDATEs, the hash chain — is the same SQL on both
 * (`kysely_journal.ts` and the `*Tx` functions it calls).
 */
import type { Kysely, Transaction } from "kysely";
import type { AttemptInput, AttemptRecord, Refused } from "../../ports/journal.ts";
import type { InstallationTable, JournalDB } from "./schema.ts";

/** Runs `fn` in one read transaction that sees a single consistent moment. */
export type Snapshot = <T>(fn: (tx: Transaction<JournalDB>) => Promise<T>) => Promise<T>;

/** The attempt transaction's outcome. */
export type AttemptOutcome = { ok: true; attempt: AttemptRecord } | Refused;

export interface JournalStore {
  readonly db: Kysely<JournalDB>;
  /**
   * Runs `fn` in one write transaction that no other writer of this journal (this process or
   * another) interleaves with, the installation row read inside it after the exclusion is held.
   */
  write<T>(fn: (tx: Transaction<JournalDB>, inst: InstallationTable) => Promise<T>): Promise<T>;
  readonly snapshot: Snapshot;
  /**
   * The attempt transaction (docs/operation-model.md#comparisons): admitted only by the fenced
   * UPDATE, in at most two round trips when nothing contends.
   */
  attempt(
    input: AttemptInput,
    a: { newId: (prefix: string) => string; point: (name: string) => Promise<void> },
  ): Promise<AttemptOutcome>;
  /** Waits for this process's writes to settle and closes the connections. */
  close(): Promise<void>;
}
