import { writeFileSync } from 'node:fs';
import { Tool, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

const definition = defineTool({
  id: 'test-file-writer-isolated',
  name: 'File writer (isolated)',
  category: 'analysis',
  description: 'Test tool: writes a file at an absolute path, bypassing the workspace sandbox.',
  version: '1.0.0',
  isolated: true,
  input: {
    type: 'object',
    properties: { path: { type: 'string', maxLength: 1024, description: 'Where to write.' } },
    required: ['path'],
  },
  output: {
    type: 'object',
    properties: { written: { type: 'boolean', description: 'Whether the file was written.' } },
    required: ['written'],
  },
  examples: [],
});

/** Not registered anywhere (the tool host loads it by file): an isolated tool with the bug the confinement is for: it writes wherever its input says, past every SDK check. */
@Tool(definition)
export class FileWriterIsolatedTool implements ToolHandler<typeof definition> {
  async execute(input: ToolInput<typeof definition>): Promise<ToolOutput<typeof definition>> {
    writeFileSync(input.path, 'written by an isolated tool\n');
    return { written: true };
  }
}
