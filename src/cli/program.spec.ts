/** The command tree as people read it: every command described, with examples; help and completion from the same tree. */
import { Command } from 'commander';
import { completions } from './completion';
import { buildProgram } from './program';

/** Help at a fixed width, whatever terminal runs the tests (snapshots must not depend on it). */
function helpOf(command: Command): string {
  let text = '';
  command.configureHelp({ helpWidth: 80 }).configureOutput({ writeOut: (s) => (text += s) });
  command.outputHelp();
  return text;
}

function leaves(command: Command, path: string[] = []): Array<{ path: string; command: Command }> {
  const visible = command.commands.filter((c) => c.name() !== 'help');
  if (visible.length === 0) return [{ path: path.join(' '), command }];
  return visible.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

describe('tos command tree', () => {
  const program = buildProgram();
  const find = (path: string) => leaves(program).find((leaf) => leaf.path === path)!.command;

  it('describes every command and shows examples for every runnable one', () => {
    const missing = leaves(program).flatMap(({ path, command }) => [
      ...(command.description() ? [] : [`${path}: no description`]),
      ...(helpOf(command).includes('\nExamples:\n  $ tos ') || helpOf(command).includes('\nExamples:\n  $ ') ? [] : [`${path}: no examples`]),
    ]);
    expect(missing).toEqual([]);
    expect(leaves(program).length).toBeGreaterThan(30);
  });

  it('prints the same help as the snapshot', () => {
    expect(helpOf(program)).toMatchSnapshot('tos --help');
    for (const path of ['tools list', 'executions list', 'invoke', 'login', 'accounts create', 'console link', 'webhooks create', 'webhooks deliveries', 'upstreams audit']) expect(helpOf(find(path))).toMatchSnapshot(`tos ${path} --help`);
  });

  it('completes commands, subcommands, options and option choices', () => {
    const values = (words: string[]) => completions(program, words).map((line) => line.split('\t')[0]);
    expect(values([''])).toEqual(expect.arrayContaining(['tools', 'invoke', 'executions', 'workspaces', 'usage', 'login', 'auth', 'whoami', 'completion']));
    expect(values(['executions', ''])).toEqual(['list', 'show', 'cancel', 'follow']);
    expect(values(['webhooks', ''])).toEqual(['create', 'list', 'show', 'update', 'delete', 'rotate', 'test', 'deliveries', 'redeliver']);
    expect(values(['webhooks', 'deliveries', '--'])).toEqual(expect.arrayContaining(['--status', '--event', '--limit', '--paginate', '--json']));
    expect(values(['tools', 'list', '--'])).toEqual(expect.arrayContaining(['--json', '--jq', '--limit', '--paginate', '--category', '--search', '--profile', '--help']));
    expect(values(['keys', 'create', '--type', ''])).toEqual(['user', 'service', 'svc', 'temporary', 'temp']);
    expect(values(['--profile', 'work', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    // Descriptions ride along for zsh and fish.
    expect(completions(program, ['tools', ''])[0]).toBe('list\tlist the tools this key may use');
  });
});
