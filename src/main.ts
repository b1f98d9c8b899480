/**
 * Composition root: the only module that reads Deno.args / Deno.env, installs signal handling
 * and calls Deno.exit. Everything else receives what it needs through `CommandIO`; the command
 * line itself is handled by cli/dispatch.ts.
 */
import type { CommandIO } from "./cli/command.ts";
import { dispatch } from "./cli/dispatch.ts";

/**
 * Writes all of `text` to a standard stream. A reader that went away (`cairn journal export |
 * head -1`) is not an error of cairn's: it stops quietly with exit 0, as `yes | head` does,
 * instead of an internal stack trace.
 */
function writer(stream: typeof Deno.stdout): (text: string) => void {
  const enc = new TextEncoder();
  return (text) => {
    let bytes = enc.encode(text);
    try {
      while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
    } catch (e) {
      if (e instanceof Deno.errors.BrokenPipe) Deno.exit(0);
      throw e;
    }
  };
}

/** The terminal's width, when the terminal tells it. */
function terminalColumns(): { columns?: number } {
  try {
    const { columns } = Deno.consoleSize();
    return columns > 0 ? { columns } : {};
  } catch {
    return {};
  }
}

function makeIO(signal: AbortSignal): CommandIO {
  const tty = Deno.stdout.isTerminal();
  return {
    stdout: writer(Deno.stdout),
    stderr: writer(Deno.stderr),
    env: Deno.env.toObject(),
    cwd: Deno.cwd(),
    color: tty && !Deno.env.get("NO_COLOR"),
    tty,
    ...(tty ? terminalColumns() : {}),
    signal,
  };
}

if (import.meta.main) {
  const controller = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(sig, () => controller.abort(new Error(`received ${sig}`)));
  }
  const code = await dispatch(Deno.args, makeIO(controller.signal));
  Deno.exit(code);
}
