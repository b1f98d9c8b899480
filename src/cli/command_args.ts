/**
 * `parseCommandArgs` through `node:util`'s `parseArgs`, for command lines that are not plain
 * (short flags, `--`, values starting with `-`, mistakes whose message parseArgs words). Kept
 * apart from command.ts so that a plain command line never loads `node:util` (see `plainArgs`).
 */
import { parseArgs } from "node:util";
import { type Command, parseCommandArgsWith, type ParsedArgs } from "./command.ts";

/** Parses `argv` for `cmd`, enforcing positional counts and known flags. */
export function parseCommandArgs(cmd: Command, argv: string[]): ParsedArgs {
  return parseCommandArgsWith(
    cmd,
    argv,
    (options, args) => parseArgs({ args, options, allowPositionals: true, strict: true }),
  );
}
