/**
 * Where a run's phases go: on a terminal, the redrawn status line (adapters/terminal/progress);
 * elsewhere one JSON line per phase on stderr, which CI logs and collectors parse without
 * scraping a display.
 */
import type { Clock } from "../ports/clock.ts";
import type { PhaseEvent } from "../app/phase_watch.ts";
import type { CommandIO } from "./command.ts";

/** What apply and rehearse hand their run, and how they end it. */
export interface PhaseOutput {
  onPhase(e: PhaseEvent): void;
  /** A log line: above the status line on a terminal, as is elsewhere. */
  log(line: string): void;
  done(summary: string): void;
  /** Stops the display without a final line (the run failed); idempotent. */
  close(): void;
}

/**
 * The terminal display or the JSON-lines writer, by `io.tty`. With `tickMs` (a run on the real
 * clock, `cairn apply`) the status line is drawn again that often, so its elapsed time moves while
 * a step waits; a run in the twin's virtual time needs no ticking (its clock moves in jumps).
 */
export async function phaseOutput(
  io: CommandIO,
  clock: Clock,
  opts: { readonly tickMs?: number } = {},
): Promise<PhaseOutput> {
  const start = clock.now();
  if (!io.tty) {
    return {
      onPhase: (e) =>
        io.stderr(JSON.stringify({ event: "phase", ...e, elapsedMs: clock.now() - start }) + "\n"),
      log: (line) => io.stderr(line),
      done: () => {},
      close: () => {},
    };
  }
  const { createProgress } = await import("../adapters/terminal/progress.ts");
  const p = createProgress({
    tty: true,
    color: io.color,
    write: io.stderr,
    clock,
    ...(io.columns !== undefined ? { columns: io.columns } : {}),
  });
  const timer = opts.tickMs ? setInterval(() => p.redraw(), opts.tickMs) : undefined;
  const stopTicking = () => {
    if (timer !== undefined) clearInterval(timer);
  };
  return {
    onPhase: (e) => p.update(e),
    log: (line) => p.note(line.trimEnd()),
    done: (summary) => {
      stopTicking();
      p.done(summary);
    },
    close: () => {
      stopTicking();
      p.release();
    },
  };
}
