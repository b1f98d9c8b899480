/**
 * Alertmanager's v2 HTTP API (`/api/v2/alerts`, `/api/v2/silences`, `/api/v2/silence/{id}`) behind
 * the `Alertmanager` port. Every call has a deadline; a refused connection, a timeout, a non-2xx
 * answer or a body that does not parse is a `CairnError` `AlertmanagerUnreadable`, so a health
 * round records it unreadable, never as a pass.
 */
import { CairnError } from "../../domain/errors.ts";
import type {
  Alertmanager,
  AlertmanagerCallOptions,
  AlertMatcher,
  FiringAlert,
  SilenceRecord,
  SilenceSpec,
} from "../../ports/alertmanager.ts";

const DEFAULT_TIMEOUT_MS = 10_000;

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
    const q = new URLSearchParams({ active: "true", silenced: "false", inhibited: "false" });
    for (const m of matchers) q.append("filter", matcherText(m));
    const v = await this.#call("GET", `/api/v2/alerts?${q}`, opts);
    if (!Array.isArray(v)) throw unreadable("GET /api/v2/alerts", "the answer is not a list");
    return v.map((a) => {
      const r = a as Record<string, unknown>;
      const status = (r["status"] ?? {}) as Record<string, unknown>;
      return {
        fingerprint: String(r["fingerprint"] ?? ""),
        labels: (r["labels"] ?? {}) as Record<string, string>,
        startsAt: String(r["startsAt"] ?? ""),
        state: String(status["state"] ?? "unknown"),
      };
    });
  }

  async createSilence(s: SilenceSpec, opts?: AlertmanagerCallOptions): Promise<string> {
    const v = await this.#call("POST", "/api/v2/silences", opts, {
      matchers: s.matchers,
      startsAt: new Date(s.startsAtMs).toISOString(),
      endsAt: new Date(s.endsAtMs).toISOString(),
      createdBy: s.createdBy,
      comment: s.comment,
    }) as Record<string, unknown> | undefined;
    const id = v?.["silenceID"];
    if (typeof id !== "string" || id === "") {
      throw unreadable("POST /api/v2/silences", "no silenceID in the answer");
    }
    return id;
  }

  async expireSilence(id: string, opts?: AlertmanagerCallOptions): Promise<void> {
    await this.#call("DELETE", `/api/v2/silence/${encodeURIComponent(id)}`, opts);
  }

  async silences(opts?: AlertmanagerCallOptions): Promise<SilenceRecord[]> {
    const v = await this.#call("GET", "/api/v2/silences", opts);
    if (!Array.isArray(v)) throw unreadable("GET /api/v2/silences", "the answer is not a list");
    return v.map((x) => {
      const r = x as Record<string, unknown>;
      return {
        id: String(r["id"] ?? ""),
        matchers: (r["matchers"] ?? []) as AlertMatcher[],
        startsAtMs: Date.parse(String(r["startsAt"] ?? "")),
        endsAtMs: Date.parse(String(r["endsAt"] ?? "")),
        createdBy: String(r["createdBy"] ?? ""),
        comment: String(r["comment"] ?? ""),
        state: String(((r["status"] ?? {}) as Record<string, unknown>)["state"] ?? "unknown"),
      };
    });
  }
}
