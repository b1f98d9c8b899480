/**
 * `JsonLogger`: the Logger port as JSON lines (`{"time","level","msg",...fields}`), one per
 * entry, written to an injected writer. `time` comes from the injected Clock so virtual-time
 * runs log virtual time. Every string (message and fields) passes through redaction; keys outside
 * the vocabulary are dropped and counted, never written.
 */
import type { Clock } from "../../ports/clock.ts";
import type { LogFieldKey, LogFields, Logger, LogLevel } from "../../ports/logger.ts";
import { redactText, redactUrl } from "./redact.ts";

/** The runtime shape of each vocabulary key; the compiler keeps it exhaustive. */
export const LOG_FIELD_KINDS = {
  planName: "string",
  planDigest: "string",
  cluster: "string",
  operationId: "string",
  attempt: "number",
  node: "string",
  phase: "string",
  state: "string",
  responseClass: "string",
  reason: "string",
  verdict: "string",
  revision: "number",
  commit: "string",
  branch: "string",
  path: "string",
  url: "string",
  durationMs: "number",
  count: "number",
  error: "string",
  lease: "string",
  identity: "string",
} as const satisfies Record<LogFieldKey, "string" | "number">;

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Longest string value written; the journal, not the log, keeps large payloads. */
export const MAX_VALUE_CHARS = 2048;

/** Options of {@link JsonLogger}. */
export interface JsonLoggerOptions {
  /** Receives one complete line (with its trailing newline) per entry. */
  readonly write: (line: string) => void;
  readonly clock: Clock;
  /** Entries below this level are not written (default `info`). */
  readonly level?: LogLevel;
}

interface Shared {
  readonly opts: JsonLoggerOptions;
  readonly min: number;
  dropped: number;
}

function cleanString(key: LogFieldKey | "msg", value: string): string {
  // Redact before clipping so a secret is never cut into pieces the patterns no longer match.
  const clean = key === "url" ? redactUrl(value) : redactText(value);
  return clean.length > MAX_VALUE_CHARS
    ? `${clean.slice(0, MAX_VALUE_CHARS)}…[${clean.length - MAX_VALUE_CHARS} more chars]`
    : clean;
}

function cleanValue(key: LogFieldKey, value: unknown): string | number | undefined {
  if (value === undefined) return undefined;
  if (LOG_FIELD_KINDS[key] === "number" && typeof value === "number" && Number.isFinite(value)) {
    return value;
  }
  // A wrong-typed value is kept as redacted text rather than trusted.
  const text = typeof value === "string" ? value : safeString(value);
  return cleanString(key, text);
}

function safeString(value: unknown): string {
  try {
    return value instanceof Error ? value.message : String(value);
  } catch {
    return "[unprintable]";
  }
}

/** A Logger writing redacted JSON lines. */
export class JsonLogger implements Logger {
  #shared: Shared;
  #base: LogFields;

  constructor(opts: JsonLoggerOptions, base: LogFields = {}) {
    this.#shared = { opts, min: LEVEL_RANK[opts.level ?? "info"], dropped: 0 };
    this.#base = base;
  }

  /** How many field keys outside the vocabulary were dropped so far (shared with children). */
  get droppedFields(): number {
    return this.#shared.dropped;
  }

  debug(msg: string, fields?: LogFields): void {
    this.#log("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#log("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#log("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.#log("error", msg, fields);
  }

  child(fields: LogFields): Logger {
    const c = new JsonLogger(this.#shared.opts, { ...this.#base, ...fields });
    c.#shared = this.#shared;
    return c;
  }

  #log(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    if (LEVEL_RANK[level] < this.#shared.min) return;
    const merged: Record<string, unknown> = { ...this.#base, ...fields };
    const entry: Record<string, string | number> = {
      time: new Date(this.#shared.opts.clock.now()).toISOString(),
      level,
      msg: cleanString("msg", safeString(msg)),
    };
    for (const key of Object.keys(merged)) {
      if (!Object.hasOwn(LOG_FIELD_KINDS, key)) this.#shared.dropped++;
    }
    // Vocabulary order, not call-site order: lines diff cleanly and tests compare bytes.
    for (const key of Object.keys(LOG_FIELD_KINDS) as LogFieldKey[]) {
      const v = cleanValue(key, merged[key]);
      if (v !== undefined) entry[key] = v;
    }
    this.#shared.opts.write(JSON.stringify(entry) + "\n");
  }
}
