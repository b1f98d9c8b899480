/**
 * Alertmanager's v2 HTTP API (`/api/v2/alerts`, `/api/v2/silences`, `/api/v2/silence/{id}`) behind
 * the `Alertmanager` port. Every call has a deadline; a refused connection, a timeout, a non-2xx
 * answer or a body that does not parse is a `CairnError` `AlertmanagerUnreadable`, so a health
 * round records it unreadable, never as a pass.
 */
import { CairnError } from "../../domain/errors.ts";
import {
  type Alertmanager,
  type AlertmanagerCallOptions,
  type AlertMatcher,
  CAIRN_SILENCE_AUTHOR,
  type FiringAlert,
  type SilenceRecord,
  type SilenceSpec,
} from "../../ports/alertmanager.ts";

const DEFAULT_TIMEOUT_MS = 10_000;
/** What `#call` answers for a 404 when the caller reads by id. */
const ABSENT: unique symbol = Symbol("absent");

function unreadable(what: string, why: string): CairnError {
  return new CairnError({ reason: "AlertmanagerUnreadable", message: `${what}: ${why}` });
}

/** `name="value"`, `name=~"re"`, `name!="v"`: Alertmanager's filter syntax. */
export function matcherText(m: AlertMatcher): string {
  const op = m.isEqual ? (m.isRegex ? "=~" : "=") : (m.isRegex ? "!~" : "!=");
  return `${m.name}${op}${JSON.stringify(m.value)}`;
}

export class HttpAlertmanager implements Alertmanager {
  readonly #base: string;

  constructor(baseUrl: string, private readonly fetchFn: typeof fetch = fetch) {
    const u = new URL(baseUrl);
    if (u.username || u.password) {
      throw new TypeError("the Alertmanager URL must carry no credentials");
    }
    this.#base = u.toString().replace(/\/$/, "");
  }

  describe(): string {
    return this.#base;
  }

  async #call(
    method: "GET" | "POST" | "DELETE",
    path: string,
    opts: AlertmanagerCallOptions | undefined,
    body?: unknown,
    absent?: typeof ABSENT,
  ): Promise<unknown> {
    const what = `${method} ${path}`;
    let res: Response;
    try {
      res = await this.fetchFn(`${this.#base}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (e) {
      throw unreadable(what, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    }
    const text = await res.text().catch(() => "");
    // Alertmanager answers 404 for a silence id it does not hold (never created, or dropped after
    // its retention): for a read by id that is an answer, not an unreadable Alertmanager.
    if (res.status === 404 && absent) return absent;
    if (!res.ok) throw unreadable(what, `HTTP ${res.status} ${text.slice(0, 200)}`);
    if (text === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw unreadable(what, "the answer is not JSON");
    }
  }

  async firingAlerts(
    matchers: readonly AlertMatcher[],
    opts?: AlertmanagerCallOptions,
  ): Promise<FiringAlert[]> {
    // Silenced alerts are asked for too: cairn's own expected-noise silences mute paging, never
    // cairn's judgement, so an alert muted only by them still fails a round (a step's post-gate
    // would otherwise pass on the very alert its silence hides).
    const q = new URLSearchParams({ active: "true", silenced: "true", inhibited: "false" });
    for (const m of matchers) q.append("filter", matcherText(m));
    const v = await this.#call("GET", `/api/v2/alerts?${q}`, opts);
    if (!Array.isArray(v)) throw unreadable("GET /api/v2/alerts", "the answer is not a list");
    const alerts = v.map((a) => {
      const r = a as Record<string, unknown>;
      const status = (r["status"] ?? {}) as Record<string, unknown>;
      const by = status["silencedBy"];
      return {
        alert: {
          fingerprint: String(r["fingerprint"] ?? ""),
          labels: (r["labels"] ?? {}) as Record<string, string>,
          startsAt: String(r["startsAt"] ?? ""),
          state: String(status["state"] ?? "unknown"),
        },
        silencedBy: Array.isArray(by) ? by.map(String) : [],
      };
    });
    if (alerts.every((a) => a.silencedBy.length === 0)) return alerts.map((a) => a.alert);
    const own = new Set(
      (await this.silences(opts)).filter((x) => x.createdBy.startsWith(CAIRN_SILENCE_AUTHOR))
        .map((x) => x.id),
    );
    // Muted by someone else's silence (any one of them): a person's decision, honoured.
    return alerts.filter((a) => a.silencedBy.every((id) => own.has(id))).map((a) => a.alert);
  }

  async createSilence(s: SilenceSpec, opts?: AlertmanagerCallOptions): Promise<string> {
    return await this.#postSilence("POST /api/v2/silences", s, opts);
  }

  async updateSilence(
    id: string,
    s: SilenceSpec,
    opts?: AlertmanagerCallOptions,
  ): Promise<string> {
    return await this.#postSilence(`POST /api/v2/silences (id ${id})`, s, opts, id);
  }

  async #postSilence(
    what: string,
    s: SilenceSpec,
    opts: AlertmanagerCallOptions | undefined,
    id?: string,
  ): Promise<string> {
    const v = await this.#call("POST", "/api/v2/silences", opts, {
      ...(id === undefined ? {} : { id }),
      matchers: s.matchers,
      startsAt: new Date(s.startsAtMs).toISOString(),
      endsAt: new Date(s.endsAtMs).toISOString(),
      createdBy: s.createdBy,
      comment: s.comment,
    }) as Record<string, unknown> | undefined;
    const answered = v?.["silenceID"];
    if (typeof answered !== "string" || answered === "") {
      throw unreadable(what, "no silenceID in the answer");
    }
    return answered;
  }

  async getSilence(
    id: string,
    opts?: AlertmanagerCallOptions,
  ): Promise<SilenceRecord | undefined> {
    const path = `/api/v2/silence/${encodeURIComponent(id)}`;
    const v = await this.#call("GET", path, opts, undefined, ABSENT);
    if (v === ABSENT) return undefined;
    if (!v || typeof v !== "object" || Array.isArray(v)) {
      throw unreadable(`GET ${path}`, "the answer is not a silence");
    }
    return silenceRecord(v as Record<string, unknown>);
  }

  async expireSilence(id: string, opts?: AlertmanagerCallOptions): Promise<void> {
    await this.#call("DELETE", `/api/v2/silence/${encodeURIComponent(id)}`, opts);
  }

  async silences(opts?: AlertmanagerCallOptions): Promise<SilenceRecord[]> {
    const v = await this.#call("GET", "/api/v2/silences", opts);
    if (!Array.isArray(v)) throw unreadable("GET /api/v2/silences", "the answer is not a list");
    return v.map((x) => silenceRecord(x as Record<string, unknown>));
  }
}

function silenceRecord(r: Record<string, unknown>): SilenceRecord {
  return {
    id: String(r["id"] ?? ""),
    matchers: (r["matchers"] ?? []) as AlertMatcher[],
    startsAtMs: Date.parse(String(r["startsAt"] ?? "")),
    endsAtMs: Date.parse(String(r["endsAt"] ?? "")),
    createdBy: String(r["createdBy"] ?? ""),
    comment: String(r["comment"] ?? ""),
    state: String(((r["status"] ?? {}) as Record<string, unknown>)["state"] ?? "unknown"),
  };
}
