/**
 * `MemoryLogger`: records log entries so tests can assert on messages, levels and fields.
 * Children share the parent's entry list, like the real logger's children share its writer.
 */
import type { LogFields, Logger, LogLevel } from "../../src/ports/logger.ts";

/** One recorded entry. */
export interface LogEntry {
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields: LogFields;
}

/** A Logger that keeps every entry in memory. */
export class MemoryLogger implements Logger {
  readonly entries: LogEntry[];
  #base: LogFields;

  constructor(entries: LogEntry[] = [], base: LogFields = {}) {
    this.entries = entries;
    this.#base = base;
  }

  debug(msg: string, fields?: LogFields): void {
    this.#push("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#push("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#push("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.#push("error", msg, fields);
  }
  child(fields: LogFields): Logger {
    return new MemoryLogger(this.entries, { ...this.#base, ...fields });
  }

  /** Entries with this message (and level, when given). */
  find(msg: string, level?: LogLevel): LogEntry[] {
    return this.entries.filter((e) => e.msg === msg && (level === undefined || e.level === level));
  }

  /** Entries whose fields include every given field value. */
  withFields(match: LogFields): LogEntry[] {
    const want = Object.entries(match);
    return this.entries.filter((e) =>
      want.every(([k, v]) => (e.fields as Record<string, unknown>)[k] === v)
    );
  }

  #push(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    this.entries.push({ level, msg, fields: { ...this.#base, ...fields } });
  }
}
