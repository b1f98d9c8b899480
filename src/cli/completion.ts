/**
 * `cairn completion bash|zsh`: a completion script generated from the command registry, so it
 * can never name a command that does not exist. Flags are completed per command from the
 * options each command declares.
 */
import { COMMANDS } from "./registry.ts";

async function flagsByCommand(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const entry of COMMANDS) {
    const cmd = await entry.load();
    out.set(cmd.path.join(" "), [...Object.keys(cmd.options), "help"].map((f) => `--${f}`));
  }
  return out;
}

/** The script for `shell`, or undefined when the shell is not supported. */
export async function completionScript(shell: string): Promise<string | undefined> {
  if (shell !== "bash" && shell !== "zsh") return undefined;
  const flags = await flagsByCommand();
  const top = [...new Set([...COMMANDS.map((c) => c.path[0]!), "help", "completion"])];
  const subs = new Map<string, string[]>();
  for (const c of COMMANDS) {
    if (c.path.length > 1) subs.set(c.path[0]!, [...(subs.get(c.path[0]!) ?? []), c.path[1]!]);
  }
  const cases: string[] = [];
  const singles: string[] = [];
  for (const [path, fl] of flags) {
    const line = `"${path}") flags="${fl.join(" ")}" ;;`;
    (path.includes(" ") ? cases : singles).push(line);
  }
  const subCases: string[] = [];
  for (const [g, s] of subs) subCases.push(`      ${g}) words_="${s.join(" ")}" ;;`);
  const body = `_cairn() {
  local cur words_ flags cmd
  cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    words_="${top.join(" ")}"
  elif [ "$COMP_CWORD" -eq 2 ] && [ "\${cur#-}" = "$cur" ]; then
    case "\${COMP_WORDS[1]}" in
${subCases.join("\n")}
      completion) words_="bash zsh" ;;
      help) words_="${top.join(" ")}" ;;
    esac
  fi
  if [ -z "$words_" ]; then
    cmd="\${COMP_WORDS[1]} \${COMP_WORDS[2]}"
    case "$cmd" in
      ${cases.join("\n      ")}
      *) case "\${COMP_WORDS[1]}" in
        ${singles.join("\n        ")}
         esac ;;
    esac
    words_="$flags"
  fi
  COMPREPLY=( $(compgen -W "$words_" -- "$cur") )
}
`;
  return shell === "bash"
    ? `# cairn bash completion: eval "$(cairn completion bash)"\n${body}complete -F _cairn cairn\n`
    : `#compdef cairn\n# cairn zsh completion: eval "$(cairn completion zsh)"\n` +
      `autoload -U +X bashcompinit && bashcompinit\n${body}complete -F _cairn cairn\n`;
}
