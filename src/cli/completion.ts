/**
 * `cairn completion bash|zsh`: a completion script generated from the command registry, so it
 * can never name a command or flag that does not exist. Words complete as command, then
 * subcommand (for groups such as `plan`), then flags once the word starts with `-`; anything
 * else (a plan file, a flag's value) is left to the shell's own file completion (`-o default`).
 * zsh runs the same function through its bash compatibility layer (`bashcompinit`).
 */
import type { Command } from "./command.ts";
import { COMMANDS } from "./registry.ts";

/** `cairn completion --help` (and `cairn help completion`). */
export const COMPLETION_HELP = `Usage: cairn completion bash|zsh

Print a shell completion script: commands, subcommands and each command's flags complete on
<TAB>; a flag's value and a plan file complete as file names.

  bash:  eval "$(cairn completion bash)"      (in ~/.bashrc)
  zsh:   eval "$(cairn completion zsh)"       (in ~/.zshrc, after compinit)

Exit codes: 0 ok, 2 usage error (no shell, or one other than bash and zsh).
`;

/** What one command path completes to: every flag, and the flags that take a value. */
interface CommandFlags {
  readonly path: string;
  readonly flags: readonly string[];
  readonly valueFlags: readonly string[];
}

function flagsOf(path: string, cmd: Command): CommandFlags {
  const options = { ...cmd.options, help: { type: "boolean", short: "h" } } as Command["options"];
  const flags: string[] = [];
  const valueFlags: string[] = [];
  for (const [name, opt] of Object.entries(options)) {
    flags.push(`--${name}`);
    // A string option's next word is its value: offering flags there would be wrong.
    if (opt.type === "string") {
      valueFlags.push(`--${name}`, ...(opt.short ? [`-${opt.short}`] : []));
    }
  }
  return { path, flags, valueFlags };
}

/** A word list for compgen -W (command and flag names are [a-z0-9-], safe inside "..."). */
const words = (ws: readonly string[]) => ws.join(" ");

/** The script for `shell`, or undefined when the shell is not supported. */
export async function completionScript(shell: string): Promise<string | undefined> {
  if (shell !== "bash" && shell !== "zsh") return undefined;
  const perCommand: CommandFlags[] = [];
  for (const entry of COMMANDS) perCommand.push(flagsOf(entry.path.join(" "), await entry.load()));
  const top = [...new Set([...COMMANDS.map((c) => c.path[0]!), "help", "completion"])];
  const groups = new Map<string, string[]>();
  for (const c of COMMANDS) {
    if (c.path.length > 1) groups.set(c.path[0]!, [...(groups.get(c.path[0]!) ?? []), c.path[1]!]);
  }
  const groupNames = [...groups.keys()].join("|");
  const subsOf = [...groups].map(([g, s]) => `    ${g}) subs="${words(s)}" ;;`).join("\n");
  const flagCases = perCommand.map((c) =>
    `    "${c.path}") flags="${words(c.flags)}" values="${words(c.valueFlags)}" ;;`
  ).join("\n");
  const body = `_cairn_subcommands() {
  case "$1" in
${subsOf}
    *) subs="" ;;
  esac
}

_cairn() {
  local cur prev path subs="" flags="" values=""
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${words(top)}" -- "$cur") )
    return 0
  fi
  case "\${COMP_WORDS[1]}" in
    completion)
      [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=( $(compgen -W "bash zsh" -- "$cur") )
      return 0 ;;
    help)
      if [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=( $(compgen -W "${words(top)}" -- "$cur") )
      elif [ "$COMP_CWORD" -eq 3 ]; then
        _cairn_subcommands "\${COMP_WORDS[2]}"
        COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
      fi
      return 0 ;;
    ${groupNames})
      if [ "$COMP_CWORD" -eq 2 ]; then
        case "$cur" in
          -*) COMPREPLY=( $(compgen -W "--help" -- "$cur") ) ;;
          *) _cairn_subcommands "\${COMP_WORDS[1]}"; COMPREPLY=( $(compgen -W "$subs" -- "$cur") ) ;;
        esac
        return 0
      fi
      path="\${COMP_WORDS[1]} \${COMP_WORDS[2]}" ;;
    *) path="\${COMP_WORDS[1]}" ;;
  esac
  case "$path" in
${flagCases}
  esac
  # The word after a value-taking flag is its value: leave it to file completion.
  case " $values " in *" $prev "*) return 0 ;; esac
  case "$cur" in -*) COMPREPLY=( $(compgen -W "$flags" -- "$cur") ) ;; esac
  return 0
}
`;
  return shell === "bash"
    ? `# cairn bash completion: eval "$(cairn completion bash)"\n${body}` +
      `complete -o default -F _cairn cairn\n`
    : `#compdef cairn\n# cairn zsh completion: eval "$(cairn completion zsh)"\n` +
      `autoload -U +X bashcompinit && bashcompinit\n${body}complete -o default -F _cairn cairn\n`;
}
