/**
 * Composition root: the only module that reads Deno.args / Deno.env, installs signal handling
 * and calls Deno.exit. Everything else receives what it needs through `CommandIO`.
 */
import { COMMANDS, findCommand } from "./cli/registry.ts";
import {
  type CommandIO,
  EXIT,
  parseCommandArgs,
  renderHelp,
  reportProblems,
  UsageError,
} from "./cli/command.ts";
import { CairnError } from "./domain/errors.ts";

const VERSION = "0.1.0";

async function topLevelHelp(): Promise<string> {
  const lines = [
    `cairn ${VERSION} — safe, reviewable GitOps upgrades for Talos Linux clusters`,
    "",
    "Usage: cairn <command> [options]   (every command takes --help)",
    "",
    "Commands:",
  ];
  for (const entry of COMMANDS) {
    const cmd = await entry.load();
    lines.push(`  ${cmd.path.join(" ").padEnd(22)} ${cmd.summary}`);
  }
  lines.push(
    "",
    "Exit codes: 0 ok, 1 refused or check failed, 2 usage error, 3 internal error.",
    "Environment: NO_COLOR disables colour. Docs: README.md, docs/architecture.md, docs/reasons.md.",
  );
  return lines.join("\n") + "\n";
}

function makeIO(signal: AbortSignal): CommandIO {
  const enc = new TextEncoder();
  const tty = Deno.stdout.isTerminal();
  return {
    stdout: (t) => void Deno.stdout.writeSync(enc.encode(t)),
    stderr: (t) => void Deno.stderr.writeSync(enc.encode(t)),
    env: Deno.env.toObject(),
    cwd: Deno.cwd(),
    color: tty && !Deno.env.get("NO_COLOR"),
    tty,
    signal,
  };
}

async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(sig, () => controller.abort(new Error(`received ${sig}`)));
  }
  const io = makeIO(controller.signal);
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout(await topLevelHelp());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (argv[0] === "--version") {
    io.stdout(`cairn ${VERSION}\n`);
    return EXIT.ok;
  }
  const entry = findCommand(argv);
  if (!entry) {
    io.stderr(`UsageInvalid: unknown command '${argv.join(" ")}'. Run 'cairn --help'.\n`);
    return EXIT.usage;
  }
  const cmd = await entry.load();
  try {
    const args = parseCommandArgs(cmd, argv.slice(entry.path.length));
    if (args.values["help"]) {
      io.stdout(renderHelp(cmd));
      return EXIT.ok;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`UsageInvalid: ${e.message}\n\n${renderHelp(cmd)}`);
      return EXIT.usage;
    }
    if (e instanceof CairnError) return reportProblems(io, [e.toProblem()]);
    io.stderr(`Internal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT.internal;
  }
}

if (import.meta.main) {
  const code = await main(Deno.args);
  Deno.exit(code);
}
