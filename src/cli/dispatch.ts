/**
 * From a command line to an exit code: top-level and group help, `help CMD`, short usage errors
 * with a "did you mean", and the mapping of failures to exit codes. main.ts supplies the I/O;
 * this module never touches Deno.* itself, so tests drive it in-process.
 */
import { COMMANDS, findCommand } from "./registry.ts";
import {
  type Command,
  type CommandIO,
  EXIT,
  EXIT_CODES_LINE,
  plainCommandArgs,
  renderHelp,
  reportProblems,
  UsageError,
} from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { suggest } from "./suggest.ts";
import { describeFailure } from "./failure.ts";

export const VERSION = "0.1.0";

const HELP_FLAGS = ["--help", "-h"];

/** First words that name a group of subcommands (`plan`, `journal`, …). */
function groups(): string[] {
  return [...new Set(COMMANDS.filter((c) => c.path.length > 1).map((c) => c.path[0]!))];
}

/** Every first word cairn accepts, for suggestions. */
function topWords(): string[] {
  return [...new Set([...COMMANDS.map((c) => c.path[0]!), "help", "completion"])];
}

function commandLine(cmd: Command): string {
  return `  ${cmd.path.join(" ").padEnd(22)} ${cmd.summary}`;
}

async function topLevelHelp(): Promise<string> {
  const lines = [
    `cairn ${VERSION} — safe, reviewable GitOps upgrades for Talos Linux clusters`,
    "",
    "Usage: cairn <command> [options]   (every command takes --help; also: cairn help <command>)",
    "",
    "Commands:",
  ];
  for (const entry of COMMANDS) lines.push(commandLine(await entry.load()));
  lines.push(
    `  ${"completion bash|zsh".padEnd(22)} print a shell completion script`,
    "",
    EXIT_CODES_LINE,
    "Environment: NO_COLOR disables colour; CAIRN_JOURNAL, KUBECONFIG, TALOSCONFIG.",
    "Docs: README.md, docs/architecture.md, docs/reasons.md.",
  );
  return lines.join("\n") + "\n";
}

/** `cairn plan --help`: the group's subcommands, one line each. */
async function groupHelp(group: string): Promise<string> {
  const lines = [`Usage: cairn ${group} <command> [options]`, "", "Commands:"];
  for (const entry of COMMANDS.filter((c) => c.path[0] === group && c.path.length > 1)) {
    lines.push(commandLine(await entry.load()));
  }
  lines.push("", `Run 'cairn ${group} <command> --help' for a command's flags.`, EXIT_CODES_LINE);
  return lines.join("\n") + "\n";
}

/** The short usage error: what was wrong, then where to read more. Exit 2. */
function usageError(io: CommandIO, prefix: string, message: string, helpHint: string): number {
  io.stderr(`${prefix}: UsageInvalid: ${message}\nrun '${helpHint}' for usage\n`);
  return EXIT.usage;
}

/** `unknown command "x"`, with the nearest command or subcommand when one is close. */
function unknownCommand(io: CommandIO, argv: readonly string[]): number {
  const [first = "", second] = argv;
  if (groups().includes(first) && second !== undefined) {
    const subs = COMMANDS.filter((c) => c.path[0] === first).map((c) => c.path.slice(1).join(" "));
    const near = suggest(second, subs);
    return usageError(
      io,
      "cairn",
      `unknown command "${first} ${second}"` + (near ? ` — did you mean "${first} ${near}"?` : ""),
      `cairn ${first} --help`,
    );
  }
  // `--version` is among the candidates: `cairn version` is what kubectl and talosctl take.
  const near = suggest(first, [...topWords(), "--version"]);
  return usageError(
    io,
    "cairn",
    `unknown command "${first}"` + (near ? ` — did you mean "${near}"?` : ""),
    "cairn --help",
  );
}

/** `cairn help [CMD...]`. */
async function helpFor(io: CommandIO, words: readonly string[]): Promise<number> {
  if (words.length === 0) {
    io.stdout(await topLevelHelp());
    return EXIT.ok;
  }
  if (words.length === 1 && words[0] === "completion") {
    io.stdout((await import("./completion.ts")).COMPLETION_HELP);
    return EXIT.ok;
  }
  const entry = COMMANDS.find((c) => c.path.join(" ") === words.join(" "));
  if (entry) {
    io.stdout(renderHelp(await entry.load()));
    return EXIT.ok;
  }
  if (words.length === 1 && groups().includes(words[0]!)) {
    io.stdout(await groupHelp(words[0]!));
    return EXIT.ok;
  }
  return unknownCommand(io, words);
}

/** Runs one cairn command line and returns its exit code. */
export async function dispatch(argv: readonly string[], io: CommandIO): Promise<number> {
  if (argv.length === 0) {
    io.stdout(await topLevelHelp());
    return EXIT.usage;
  }
  const [first, ...rest] = argv as [string, ...string[]];
  // `cairn --help plan check` reads as `cairn help plan check`.
  if (HELP_FLAGS.includes(first)) return await helpFor(io, rest);
  if (first === "help") return await helpFor(io, rest);
  if (first === "--version") {
    io.stdout(`cairn ${VERSION}\n`);
    return EXIT.ok;
  }
  if (first === "completion") {
    const { completionScript, COMPLETION_HELP } = await import("./completion.ts");
    if (rest.some((w) => HELP_FLAGS.includes(w))) {
      io.stdout(COMPLETION_HELP);
      return EXIT.ok;
    }
    const script = rest.length === 1 ? await completionScript(rest[0]!) : undefined;
    if (script === undefined) {
      const got = rest.length === 0 ? "no shell given" : `got "${rest.join(" ")}"`;
      return usageError(
        io,
        "cairn completion",
        `expected bash or zsh (${got})`,
        "cairn completion --help",
      );
    }
    io.stdout(script);
    return EXIT.ok;
  }
  if (first.startsWith("-")) {
    // A flag before any command: cairn's flags belong to commands.
    return usageError(
      io,
      "cairn",
      `unknown flag "${first}" (flags follow the command: cairn <command> [options])`,
      "cairn --help",
    );
  }
  // `cairn plan help [check]` reads as `cairn help plan [check]`.
  if (groups().includes(first) && rest[0] === "help") {
    return await helpFor(io, [first, ...rest.slice(1)]);
  }
  const entry = findCommand(argv);
  if (!entry) {
    if (groups().includes(first) && (rest.length === 0 || HELP_FLAGS.includes(rest[0]!))) {
      io.stdout(await groupHelp(first));
      return rest.length === 0 ? EXIT.usage : EXIT.ok;
    }
    return unknownCommand(io, argv);
  }
  const cmd = await entry.load();
  const name = `cairn ${cmd.path.join(" ")}`;
  try {
    const words = argv.slice(entry.path.length);
    // A plain command line never loads node:util (plainArgs); any other goes through parseArgs.
    const args = plainCommandArgs(cmd, words) ??
      (await import("./command_args.ts")).parseCommandArgs(cmd, words);
    if (args.values["help"]) {
      io.stdout(renderHelp(cmd));
      return EXIT.ok;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof UsageError) return usageError(io, name, e.message, `${name} --help`);
    if (e instanceof CairnError) return reportProblems(io, [e.toProblem()]);
    const known = describeFailure(e);
    if (known) return reportProblems(io, [known]);
    io.stderr(`Internal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT.internal;
  }
}
