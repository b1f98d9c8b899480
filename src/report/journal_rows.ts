/**
 * The journal tables an execution report is built from, typed. `journalRows` narrows the plain
 * rows of `Journal.exportAll()` (or a recorded export) and refuses a row missing a column the
 * report relies on, so a schema drift fails loudly instead of rendering blanks.
 */

export interface PlanRow {
  readonly digest: string;
  readonly name: string;
  readonly cluster: string;
  readonly state: string;
  readonly approved_at_ms: number | null;
  readonly first_seen_commit: string;
  readonly first_seen_at_ms: number;
}

export interface OperationRow {
  readonly id: string;
  readonly plan_digest: string;
  readonly step: string;
  readonly machine: string;
  readonly state: string;
  readonly created_at_ms: number;
}

export interface AttemptRow {
  readonly operation_id: string;
  readonly number: number;
  readonly phase: string;
  readonly sent_at_ms: number;
  readonly transport_deadline_ms: number;
  readonly verification_deadline_ms: number;
  readonly response_class: string | null;
  readonly response_detail: string | null;
  readonly response_at_ms: number | null;
  readonly accounted_by: string | null;
}

export interface PhaseRow {
  readonly operation_id: string;
  readonly phase: string;
  readonly kind: string;
  readonly at_ms: number;
  readonly revision: number;
}

export interface HealthRoundRow {
  readonly id: string;
  readonly cluster: string;
  readonly operation_id: string | null;
  readonly purpose: string;
  readonly started_at_ms: number;
  readonly finished_at_ms: number;
  readonly verdict: string;
}

export interface HealthResultRow {
  readonly round_id: string;
  readonly idx: number;
  readonly binding: string;
  readonly outcome: string;
  readonly reason: string;
  readonly object_uid: string | null;
  readonly resource_version: string | null;
  readonly observed_at_ms: number;
}

export interface RecoveryRow {
  readonly operation_id: string;
  readonly kind: string;
  readonly actor: string;
  readonly evidence: string;
  readonly explanation: string | null;
  readonly at_ms: number;
}

export interface EventRow {
  readonly seq: number;
  readonly kind: string;
  readonly operation_id: string | null;
  readonly at_ms: number;
  readonly body: string;
}

/** The tables the execution report reads. */
export interface JournalRows {
  readonly plans: readonly PlanRow[];
  readonly operations: readonly OperationRow[];
  readonly attempts: readonly AttemptRow[];
  readonly phases: readonly PhaseRow[];
  readonly health_rounds: readonly HealthRoundRow[];
  readonly health_results: readonly HealthResultRow[];
  readonly recoveries: readonly RecoveryRow[];
  readonly events: readonly EventRow[];
}

const COLUMNS: Readonly<Record<keyof JournalRows, readonly string[]>> = {
  plans: ["digest", "name", "cluster", "state", "first_seen_commit", "first_seen_at_ms"],
  operations: ["id", "plan_digest", "step", "machine", "state", "created_at_ms"],
  attempts: ["operation_id", "number", "phase", "sent_at_ms", "transport_deadline_ms"],
  phases: ["operation_id", "phase", "kind", "at_ms", "revision"],
  health_rounds: ["id", "cluster", "purpose", "started_at_ms", "finished_at_ms", "verdict"],
  health_results: ["round_id", "idx", "binding", "outcome", "reason", "observed_at_ms"],
  recoveries: ["operation_id", "kind", "actor", "evidence", "at_ms"],
  events: ["seq", "kind", "at_ms", "body"],
};

/** Narrows `exportAll()` output; throws naming the table and column when one is missing. */
export function journalRows(raw: Readonly<Record<string, readonly unknown[]>>): JournalRows {
  const out: Record<string, readonly unknown[]> = {};
  for (const [table, cols] of Object.entries(COLUMNS)) {
    const rows = raw[table] ?? [];
    for (const row of rows) {
      const r = row as Record<string, unknown>;
      const missing = cols.find((c) => r[c] === undefined);
      if (missing) throw new TypeError(`journal export: ${table}.${missing} is missing`);
    }
    out[table] = rows.map(numbered);
  }
  return out as unknown as JournalRows;
}

// libSQL may hand integers back as bigint; reports do arithmetic on them as numbers.
function numbered(row: unknown): unknown {
  const r = row as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v]),
  );
}
