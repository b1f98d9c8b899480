/**
 * A progress display for commands run by a person: on a terminal one status line redrawn in
 * place (`[3/7] worker-2 drain 00:12:30 · waiting for the node's pods evicted …`), cut to the
 * terminal's width so a redraw never leaves a wrapped remnant behind; elsewhere one plain line per change so CI logs stay
 * readable. Elapsed time is the injected clock's, so rehearsals show virtual time. Colour only on
 * a terminal and only when the caller allows it (NO_COLOR is folded into `color` by the caller).
 */
import type { Clock } from "../../ports/clock.ts";

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  /** True when the output is a terminal (redraw in place). */
  readonly tty: boolean;
  /** True when colour may be used (a terminal and NO_COLOR unset). */
  readonly color: boolean;
  readonly write: (text: string) => void;
  readonly clock: Clock;
  /** The terminal's width: the status line is cut to fit (a wrapped line cannot be redrawn). */
  readonly columns?: number;
}

/** Where the run is. `index` is 1-based. */
export interface ProgressState {
  readonly node: string;
  readonly index: number;
  readonly total: number;
  readonly phase: string;
  /** What the run waits for now, in words. */
  readonly waiting?: string;
}

/** A progress display. */
export interface Progress {
  update(state: ProgressState): void;
  /** A line that stays (an outcome, a warning); the status line is redrawn below it. */
  note(line: string): void;
  /** Ends the display with a final line. */
  done(summary: string): void;
  /** On a terminal, draws the status line again (its elapsed time moves); elsewhere nothing. */
  redraw(): void;
  /** Ends the display without a summary: the last status line stays, and output goes below it. */
  release(): void;
}

const CLEAR_LINE = "\r\x1b[2K";

/** Formats milliseconds as `hh:mm:ss` (hours grow past 99 rather than wrap). */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

// Terminal text from the cluster or plan (node names) must not smuggle escape sequences.
function printable(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

/** Creates a progress display over `write`. */
export function createProgress(opts: ProgressOptions): Progress {
  const start = opts.clock.now();
  const paint = (code: string, s: string) =>
    opts.tty && opts.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  let current: ProgressState | undefined;
  let lastPlain = "";
  let drawn = false;
  const render = (st: ProgressState) => {
    const elapsed = formatElapsed(opts.clock.now() - start);
    const head = `[${st.index}/${st.total}] ${printable(st.node)} ${
      printable(st.phase)
    } ${elapsed}`;
    let waiting = st.waiting ? ` · waiting for ${printable(st.waiting)}` : "";
    // Cut before colouring, by visible characters; one column is left for the cursor.
    const room = opts.tty && opts.columns ? opts.columns - 1 - head.length : Infinity;
    if (waiting.length > room) waiting = room > 1 ? `${waiting.slice(0, room - 1)}…` : "";
    if (room < 0) {
      // Even the node and phase do not fit: the plain line, cut (a wrapped line cannot be redrawn).
      return `${head.slice(0, Math.max(1, opts.columns! - 2))}…`;
    }
    return `[${st.index}/${st.total}] ${paint("1", printable(st.node))} ${
      paint("36", printable(st.phase))
    } ${paint("2", elapsed)}${paint("2", waiting)}`;
  };
  const clear = () => {
    if (drawn) opts.write(CLEAR_LINE);
    drawn = false;
  };
  return {
    update(st) {
      current = st;
      if (opts.tty) {
        opts.write(CLEAR_LINE + render(st));
        drawn = true;
        return;
      }
      const key = `${st.index}/${st.total} ${st.node} ${st.phase} ${st.waiting ?? ""}`;
      if (key === lastPlain) return;
      lastPlain = key;
      opts.write(render(st) + "\n");
    },
    note(line) {
      clear();
      opts.write(printable(line) + "\n");
      if (opts.tty && current) {
        opts.write(render(current));
        drawn = true;
      }
    },
    redraw() {
      if (!opts.tty || !current) return;
      opts.write(CLEAR_LINE + render(current));
      drawn = true;
    },
    release() {
      if (drawn) opts.write("\n");
      drawn = false;
      current = undefined;
    },
    done(summary) {
      clear();
      opts.write(`${printable(summary)} (${formatElapsed(opts.clock.now() - start)})\n`);
      current = undefined;
    },
  };
}
