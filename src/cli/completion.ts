/**
 * Shell completion, the way cobra (gh) does it: `tos completion bash|zsh|fish` prints a small
 * script, and the script asks `tos __complete <words…>` for candidates, which walks the same
 * commander tree `--help` is made from — so completion never lags behind the commands.
 */
import { Command, Option } from 'commander';
import { examples } from './client/help';

export const COMPLETE_COMMAND = '__complete';

const SCRIPTS = {
  bash: `# tos completion for bash: source it, or save it in /etc/bash_completion.d/tos
_tos_complete() {
  local IFS=$'\\n'
  local candidates
  candidates=$(tos ${COMPLETE_COMMAND} "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null | cut -f1)
  COMPREPLY=($(compgen -W "$candidates" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _tos_complete tos
`,
  zsh: `#compdef tos
# tos completion for zsh: save it as _tos in a directory of $fpath, or source it after compinit
_tos() {
  local -a candidates
  candidates=("\${(@f)$(tos ${COMPLETE_COMMAND} "\${(@)words[2,CURRENT]}" 2>/dev/null | sed -e 's/:/\\\\:/g' -e 's/\\t/:/')}")
  candidates=(\${candidates:#})
  if (( \${#candidates} )); then _describe 'tos' candidates; else _files; fi
}
compdef _tos tos
`,
  fish: `# tos completion for fish: save it as ~/.config/fish/completions/tos.fish
function __tos_complete
    set -l words (commandline -opc) (commandline -ct)
    tos ${COMPLETE_COMMAND} $words[2..-1] 2>/dev/null
end
complete -c tos -f -a '(__tos_complete)'
`,
} as const;

export function registerCompletion(program: Command): void {
  examples(
    program
      .command('completion')
      .description('print the shell completion script for bash, zsh or fish')
      .addArgument(program.createArgument('<shell>', 'bash, zsh or fish').choices(Object.keys(SCRIPTS))),
    ['source <(tos completion bash)', 'tos completion zsh > "${fpath[1]}/_tos"', 'tos completion fish > ~/.config/fish/completions/tos.fish'],
  ).action((shell: keyof typeof SCRIPTS) => {
    process.stdout.write(SCRIPTS[shell]);
  });
}

const visible = (command: Command) => command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
const optionsOf = (command: Command): readonly Option[] => (command as unknown as { options: Option[] }).options;
const findOption = (command: Command, flag: string) => optionsOf(command).find((o) => o.long === flag || o.short === flag);

/** Candidates for the last of `words` (the words after `tos`), one per line: `value<TAB>description`. */
export function completions(program: Command, words: string[]): string[] {
  let command = program;
  const current = words.at(-1) ?? '';
  let expectsValue: Option | undefined;
  for (const word of words.slice(0, -1)) {
    if (expectsValue) {
      expectsValue = undefined;
      continue;
    }
    if (word.startsWith('-')) {
      const option = word.includes('=') ? undefined : (findOption(command, word) ?? findOption(program, word));
      if (option?.required) expectsValue = option;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) command = sub;
  }
  if (expectsValue) return (expectsValue.argChoices ?? []).map((choice) => `${choice}\t${expectsValue!.description}`);
  if (current.startsWith('-')) {
    const options = command === program ? optionsOf(program) : [...optionsOf(command), ...optionsOf(program).filter((o) => o.long !== '--version')];
    return [...options.filter((o) => o.long && !o.hidden).map((o) => `${o.long}\t${o.description}`), `--help\tshow help`];
  }
  const subs = visible(command).map((sub) => `${sub.name()}\t${sub.description()}`);
  if (subs.length > 0) return subs;
  const argument = (command as unknown as { registeredArguments: { argChoices?: string[] }[] }).registeredArguments[0];
  return (argument?.argChoices ?? []).map((choice) => `${choice}\t`);
}
