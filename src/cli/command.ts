import type { ParseArgsOptionsConfig } from "node:util";
import { CairnError, formatProblem, type Problem } from "../domain/errors.ts";
import { suggest } from "./suggest.ts";

/** Documented exit codes of every cairn command. */
export const EXIT = {
  /** The command did what was asked and every check passed. */
  ok: 0,
  /** A check failed or the request was refused (invalid plan, bad signature, unresolved outcome). */
  refused: 1,
  /** The command line was malformed. */
  usage: 2,
  /** cairn itself failed (a bug or an unexpected environment problem). */
  internal: 3,
} as const;

/** Where a command writes and what it may read from its environment. */
export interface CommandIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** True when colour may be used (a terminal and NO_COLOR unset). */
  readonly color: boolean;
  /** True when stdout is a terminal (progress displays). */
  readonly tty: boolean;
  /** The terminal's width when `tty` (a status line is cut to it); absent when unknown. */
  readonly columns?: number;
  /** Aborted on SIGINT/SIGTERM so long-running commands stop between steps. */
  readonly signal: AbortSignal;
}

/** Parsed arguments handed to a command. */
export interface ParsedArgs {
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly positionals: string[];
}

/** One CLI command. `run` returns the exit code. */
export interface Command {
  /** Full command path, e.g. `["plan", "check"]`. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Usage line after `cairn <path>`, e.g. `FILE... [--output json]`. */
  readonly usage: string;
  /** Longer help text: what it does, its flags, its exit codes. */
  readonly help: string;
  readonly options: ParseArgsOptionsConfig;
  /** Minimum and maximum number of positionals (max undefined = unbounded). */
  readonly positionals?: { readonly min: number; readonly max?: number };
  run(args: ParsedArgs, io: CommandIO): Promise<number>;
}

/** Common `--output` flag for commands that report. */
export const OUTPUT_OPTION = { output: { type: "string", short: "o", default: "text" } } as const;

/** Thrown for malformed command lines; main maps it to exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Refuses the first flag `cmd` does not declare, naming the nearest declared one. Done before
 * parseArgs because its own message ("To specify a positional argument starting with a '-'…")
 * is about quoting, not about the likely typo.
 */
function refuseUnknownFlags(cmd: Command, argv: readonly string[]): void {
  const options: ParseArgsOptionsConfig = { ...cmd.options, help: { type: "boolean", short: "h" } };
  const longs = Object.keys(options);
  const shorts = Object.values(options).flatMap((o) => o.short ? [o.short] : []);
  for (const arg of argv) {
    if (arg === "--") return;
    if (arg.startsWith("--")) {
      const name = arg.slice(2).split("=")[0]!;
      if (longs.includes(name)) continue;
      const near = suggest(name, longs);
      throw new UsageError(
        `unknown flag "--${name}"` + (near ? ` — did you mean "--${near}"?` : ""),
      );
    }
    if (/^-[^-]/.test(arg) && !/^-\d/.test(arg)) {
      for (const ch of arg.slice(1)) {
        if (shorts.includes(ch)) {
          // A short flag taking a value consumes the rest of this token.
          const opt = Object.values(options).find((o) => o.short === ch);
          if (opt?.type === "string") break;
          continue;
        }
        throw new UsageError(`unknown flag "-${ch}"`);
      }
    }
  }
}

/** What `parseArgs` returns for the options of a command (`values` has no prototype). */
export interface RawArgs {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
}

/** A command's options as parsed: its own and `--help`/`-h`. */
export function commandOptions(cmd: Command): ParseArgsOptionsConfig {
  return { ...cmd.options, help: { type: "boolean", short: "h" } };
}

/**
 * `parseArgs`'s result for a plain command line: only positionals that do not start with `-`,
 * long flags the command declares (`--flag`, `--name value`, `--name=value`), and no `--`.
 * `undefined` for anything else (short flags, a value that starts with `-`, a missing value, a
 * boolean given a value, …): `parseArgs` then reads it and says what is wrong. Importing
 * `node:util` starts Deno's Node compatibility layer, a large part of a cold start; the command
 * lines scripts and CI write are plain. test/cli/command_args_test.ts holds the result equal to
 * parseArgs' on generated command lines.
 */
export function plainArgs(
  options: ParseArgsOptionsConfig,
  argv: readonly string[],
): RawArgs | undefined {
  const values: RawArgs["values"] = Object.create(null);
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--") || arg === "--") return undefined;
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!Object.hasOwn(options, name) || name === "__proto__") return undefined;
    const option = options[name]!;
    let value: string | boolean;
    if (option.type === "boolean") {
      if (eq !== -1) return undefined;
      value = true;
    } else if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("-")) return undefined;
      value = next;
      i++;
    }
    const held = values[name];
    if (!option.multiple) values[name] = value;
    else if (Array.isArray(held)) held.push(value);
    else values[name] = [value];
  }
  for (const [name, option] of Object.entries(options)) {
    if (option.default !== undefined && values[name] === undefined) values[name] = option.default;
  }
  return { values, positionals };
}

/**
 * `parseCommandArgs` for a plain command line (see {@link plainArgs}), without loading
 * `node:util`; `undefined` when the line is not plain. Throws the same usage errors.
 */
export function plainCommandArgs(cmd: Command, argv: readonly string[]): ParsedArgs | undefined {
  return commandArgs(cmd, argv, plainArgs);
}

/**
 * Parses `argv` for `cmd`, enforcing positional counts and known flags, with `parseArg`
 * (`node:util`'s `parseArgs` in command_args.ts), whose errors become usage errors.
 */
export function parseCommandArgsWith(
  cmd: Command,
  argv: string[],
  parseArg: (options: ParseArgsOptionsConfig, argv: string[]) => RawArgs,
): ParsedArgs {
  return commandArgs(cmd, argv, (options, args) => {
    try {
      return parseArg(options, [...args]);
    } catch (e) {
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
  })!;
}

/** Unknown flags refused, `argv` parsed by `parse`, then its positionals and output checked. */
function commandArgs(
  cmd: Command,
  argv: readonly string[],
  parse: (options: ParseArgsOptionsConfig, argv: readonly string[]) => RawArgs | undefined,
): ParsedArgs | undefined {
  refuseUnknownFlags(cmd, argv);
  const parsed = parse(commandOptions(cmd), argv);
  return parsed && checkedArgs(cmd, parsed);
}

/** Positional counts and `--output` checked on parsed arguments. */
function checkedArgs(cmd: Command, parsed: RawArgs): ParsedArgs {
  const n = parsed.positionals.length;
  const want = cmd.positionals ?? { min: 0, max: 0 };
  if (!parsed.values.help) {
    if (n < want.min) {
      // Name what is missing from the usage line (`FILE...`, `PLAN`), not a count.
      const names = positionalNames(cmd.usage);
      const what = names[n] ?? "an argument";
      throw new UsageError(`missing ${what} (usage: cairn ${cmd.path.join(" ")} ${cmd.usage})`);
    }
    if (want.max !== undefined && n > want.max) {
      const extra = parsed.positionals.slice(want.max).map((p) => JSON.stringify(p)).join(" ");
      throw new UsageError(
        `unexpected argument(s) ${extra}; takes ${
          want.max === 0 ? "none" : `at most ${want.max}`
        } ` +
          `(usage: cairn ${cmd.path.join(" ")} ${cmd.usage})`,
      );
    }
  }
  const values = parsed.values as ParsedArgs["values"];
  const output = values["output"];
  if (output !== undefined && output !== "text" && output !== "json") {
    throw new UsageError(`--output must be text or json, got ${String(output)}`);
  }
  return { values, positionals: parsed.positionals };
}

/** True when the command was asked for JSON output. */
export function wantsJson(args: ParsedArgs): boolean {
  return args.values["output"] === "json";
}

/** The positional names a usage line starts with (`FILE... [--x]` → `FILE...`). */
function positionalNames(usage: string): string[] {
  const names: string[] = [];
  for (const word of usage.split(/\s+/)) {
    // `FILE`, `FILE...`, or a choice of words (`talos|kubernetes|config`).
    if (!/^([A-Z][A-Z0-9_]*(\.\.\.)?|[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)+)$/.test(word)) break;
    names.push(word);
  }
  return names;
}

/** Writes a value as pretty JSON on stdout. */
export function printJson(io: CommandIO, value: unknown): void {
  io.stdout(JSON.stringify(value, null, 2) + "\n");
}

/** ANSI styling that respects NO_COLOR and non-terminals. */
export function style(io: CommandIO) {
  const wrap = (code: string) => (s: string) => io.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  return {
    red: wrap("31"),
    green: wrap("32"),
    yellow: wrap("33"),
    bold: wrap("1"),
    dim: wrap("2"),
  };
}

/** Reports problems on stderr (text) and returns the exit code for them. */
export function reportProblems(io: CommandIO, problems: readonly Problem[]): number {
  for (const p of problems) io.stderr(formatProblem(p) + "\n");
  return problems.length === 0 ? EXIT.ok : EXIT.refused;
}

/** Converts a thrown CairnError into a problem; rethrows anything else. */
export function asProblem(e: unknown): Problem {
  if (e instanceof CairnError) return e.toProblem();
  throw e;
}

/** The exit codes every command shares, for help texts that do not state their own. */
export const EXIT_CODES_LINE =
  "Exit codes: 0 ok, 1 refused or check failed, 2 usage error, 3 internal error.";

/**
 * Renders `cairn <path> --help`. A command whose help states its own, more specific exit codes
 * keeps those and does not get the generic line as well (it used to print both).
 */
export function renderHelp(cmd: Command): string {
  const help = cmd.help.trim();
  const exitCodes = /^Exit codes/m.test(help) ? "" : `\n${EXIT_CODES_LINE}\n`;
  return `Usage: cairn ${cmd.path.join(" ")} ${cmd.usage}\n\n${cmd.summary}\n\n${help}\n` +
    exitCodes;
}

/**
 * `--registry-mirror HOST=URL` values: installer references naming HOST are resolved at URL
 * (`https://…`, or `http://` on loopback — the twin's registry in tests and rehearsals).
 */
export function parseRegistryMirrors(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of Array.isArray(v) ? v.map(String) : []) {
    const eq = item.indexOf("=");
    if (eq <= 0 || !/^https?:\/\//.test(item.slice(eq + 1))) {
      throw new UsageError(`--registry-mirror wants HOST=URL (http(s)://…), got ${item}`);
    }
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}
