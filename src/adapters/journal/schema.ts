/** kysely table interfaces of the journal (migrations 0001–0003). */

export interface InstallationTable {
  id: number;
  epoch: string;
  recovery_mode: number;
  created_at_ms: number;
}

export interface JournalSchemaTable {
  id: number;
  version: number;
}

export interface EpochTable {
  epoch: string;
  minted_at_ms: number;
  reason: string;
}

export interface MachineTable {
  machine: string;
  revision_counter: number;
  frozen: number;
}

export interface PlanTable {
  digest: string;
  name: string;
  kind: string;
  cluster: string;
  state: string;
  approval_epoch: string | null;
  approved_at_ms: number | null;
  expires_at_ms: number;
  max_attempts: number;
  max_evidence_age_ms: number;
  first_seen_commit: string;
  first_seen_at_ms: number;
  bytes: string;
  signatures: string;
  steps_json: string;
}

export interface PlanNameTable {
  name: string;
  digest: string;
}

export interface OperationTable {
  id: string;
  plan_digest: string;
  step: string;
  machine: string;
  cluster: string;
  state: string;
  owner: string;
  owner_gen: number;
  owner_epoch: string;
  owner_since_ms: number;
  attempts_used: number;
  safe_retry_revision: number | null;
  safe_retry_gen: number | null;
  created_at_ms: number;
}

export interface AttemptTable {
  id: string;
  operation_id: string;
  number: number;
  phase: string;
  request_digest: string;
  route: string;
  owner: string;
  owner_gen: number;
  owner_epoch: string;
  evidence_id: string;
  sent_at_ms: number;
  transport_deadline_ms: number;
  verification_deadline_ms: number;
  class_revision: number | null;
  response_class: string | null;
  response_detail: string | null;
  response_at_ms: number | null;
  accounted_by: string | null;
  accounted_revision: number | null;
}

export interface ObservationTable {
  id: string;
  machine: string;
  purpose: string;
  plan_digest: string | null;
  operation_id: string | null;
  basis: number;
  revision: number;
  digest: string;
  object_uid: string;
  resource_version: string;
  resource_version_at_start: string | null;
  observed_generation: number;
  observed_at_ms: number;
  summary: string;
  /** Completion reads only: `established` | `contradicted` | `unreadable` (migration 0002). */
  postcondition: string | null;
  /** Evidence reads only: the machine observed on both sides (migration 0004). */
  machine_identity: string | null;
}

export interface PhaseTable {
  id: string;
  operation_id: string;
  phase: string;
  kind: string;
  at_ms: number;
  detail: string;
  revision: number;
}

export interface HealthRoundTable {
  id: string;
  cluster: string;
  operation_id: string | null;
  purpose: string;
  started_at_ms: number;
  finished_at_ms: number;
  verdict: string;
}

export interface HealthResultTable {
  round_id: string;
  idx: number;
  binding: string;
  /** Reader label (migration 0003); null on older rows. */
  reader: string | null;
  outcome: string;
  reason: string;
  object_uid: string | null;
  /** `Kind namespace/name` of the object read (migration 0005); null on older rows. */
  object_ref: string | null;
  resource_version: string | null;
  observed_at_ms: number;
}

export interface RecoveryTable {
  id: string;
  operation_id: string;
  attempt_id: string | null;
  kind: string;
  actor: string;
  evidence: string;
  explanation: string | null;
  observation_id: string | null;
  at_ms: number;
  epoch: string;
}

export interface RecoveryScopeTable {
  machine: string;
  epoch: string;
  state: string;
  at_ms: number;
}

export interface EventTable {
  seq: number;
  at_ms: number;
  kind: string;
  machine: string | null;
  revision: number | null;
  operation_id: string | null;
  epoch: string;
  actor: string;
  body: string;
  prev_hash: string;
  hash: string;
}

/** A recovery-admin's mutation attempt (migration 0006). */
export interface RecoveryAttemptTable {
  id: string;
  operation_id: string;
  machine: string;
  actor: string;
  role: string;
  decision: string;
  phase: string;
  request_digest: string;
  route: string;
  evidence: string;
  owner: string;
  owner_gen: number;
  owner_epoch: string;
  begun_at_ms: number;
  response_class: string | null;
  response_detail: string | null;
  responded_at_ms: number | null;
}

/** The whole journal database. */
export interface JournalDB {
  installation: InstallationTable;
  journal_schema: JournalSchemaTable;
  epochs: EpochTable;
  machines: MachineTable;
  plans: PlanTable;
  plan_names: PlanNameTable;
  operations: OperationTable;
  attempts: AttemptTable;
  observations: ObservationTable;
  phases: PhaseTable;
  health_rounds: HealthRoundTable;
  health_results: HealthResultTable;
  recoveries: RecoveryTable;
  recovery_scopes: RecoveryScopeTable;
  recovery_attempts: RecoveryAttemptTable;
  events: EventTable;
}
