/**
 * Alertmanager as cairn sees it (docs/operating.md#alert-veto-and-silences): firing alerts read
 * for the health policy's vetoing bindings, and silences for the noise a plan declares, created and
 * expired as leases. Implemented over the v2 HTTP API by `adapters/alertmanager/`.
 */

/** One label matcher, as Alertmanager's v2 API writes it. */
export interface AlertMatcher {
  readonly name: string;
  readonly value: string;
  readonly isRegex: boolean;
  /** false: the matcher is negated (`!=`, `!~`). */
  readonly isEqual: boolean;
}

/** A firing alert as Alertmanager reports it. */
/**
 * How every silence cairn creates begins its `createdBy` (`cairn <owner>`): such a silence mutes
 * paging only, never cairn's own health judgement (`firingAlerts` still returns what it mutes).
 */
export const CAIRN_SILENCE_AUTHOR = "cairn ";

export interface FiringAlert {
  readonly fingerprint: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly startsAt: string;
  /** `active`, `suppressed` or `unprocessed`. */
  readonly state: string;
}

/** A silence as created or read back. */
export interface SilenceSpec {
  readonly matchers: readonly AlertMatcher[];
  readonly startsAtMs: number;
  readonly endsAtMs: number;
  readonly createdBy: string;
  readonly comment: string;
}

/** A silence as Alertmanager holds it. */
export interface SilenceRecord extends SilenceSpec {
  readonly id: string;
  /** `pending`, `active` or `expired`. */
  readonly state: string;
}

export interface AlertmanagerCallOptions {
  /** Bound on the call, in the adapter's wall-clock ms. */
  readonly timeoutMs?: number;
}

export interface Alertmanager {
  /** Where it is, for evidence (`http://127.0.0.1:9093`); never carries credentials. */
  describe(): string;
  /**
   * Active, uninhibited alerts matching every matcher, unsilenced or muted only by cairn's own
   * silences (`CAIRN_SILENCE_AUTHOR`). Throws when unreadable.
   */
  firingAlerts(
    matchers: readonly AlertMatcher[],
    opts?: AlertmanagerCallOptions,
  ): Promise<FiringAlert[]>;
  /** Creates a silence; returns its id. Throws when it cannot be confirmed. */
  createSilence(s: SilenceSpec, opts?: AlertmanagerCallOptions): Promise<string>;
  /**
   * Renews a silence in place: Alertmanager's update by id (`POST /api/v2/silences` carrying the
   * id). Alertmanager keeps the id when only the end moves and the matchers and start are the ones
   * it holds; otherwise it expires the old silence and answers a new id, so one silence is live
   * either way. Returns the id it answered. Throws when unconfirmed or when the id is unknown.
   */
  updateSilence(id: string, s: SilenceSpec, opts?: AlertmanagerCallOptions): Promise<string>;
  /** One silence by id; undefined when Alertmanager does not know it. Throws when unreadable. */
  getSilence(id: string, opts?: AlertmanagerCallOptions): Promise<SilenceRecord | undefined>;
  /** Expires a silence now (a silence already expired is fine). */
  expireSilence(id: string, opts?: AlertmanagerCallOptions): Promise<void>;
  /** Every silence Alertmanager holds (any state). */
  silences(opts?: AlertmanagerCallOptions): Promise<SilenceRecord[]>;
}
