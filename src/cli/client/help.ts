/** `--help` ends with examples, as gh's does: each command says how it is used, not only what it takes. */
import type { Command } from 'commander';

export function examples(command: Command, lines: string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`);
}
