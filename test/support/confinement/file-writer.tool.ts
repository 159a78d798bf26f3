import { writeFileSync } from 'node:fs';
import { Tool, type ToolHandler } from '@tos/sdk';

/** Not registered anywhere (the tool host loads it by file): an isolated tool with the bug the confinement is for: it writes wherever its input says, past every SDK check. */
@Tool({
  id: 'test-file-writer-isolated',
  name: 'File writer (isolated)',
  category: 'analysis',
  description: 'Test tool: writes a file at an absolute path, bypassing the workspace sandbox.',
  version: '1.0.0',
  isolated: true,
  inputs: { path: { type: 'string', maxLength: 1024, description: 'Where to write.' } },
  outputs: { written: { type: 'boolean', description: 'Whether the file was written.' } },
  examples: [],
})
export class FileWriterIsolatedTool implements ToolHandler<{ path: string }, { written: boolean }> {
  async execute(input: { path: string }): Promise<{ written: boolean }> {
    writeFileSync(input.path, 'written by an isolated tool\n');
    return { written: true };
  }
}
