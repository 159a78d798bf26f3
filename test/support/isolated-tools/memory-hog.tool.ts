import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

const definition = defineTool({
  id: 'test-memory-hog-isolated',
  name: 'Memory hog (isolated)',
  category: 'analysis',
  description: 'Test tool: holds about `megabytes` MB of JavaScript heap, then returns.',
  version: '1.0.0',
  isolated: true,
  input: {
    type: 'object',
    properties: {
      megabytes: { type: 'integer', minimum: 0, maximum: 65_536, description: 'How much heap to hold.' },
      at_once: { type: 'boolean', default: false, description: 'In one allocation (past the heap limit, V8 aborts the process) rather than row by row.' },
    },
  },
  output: {
    type: 'object',
    properties: { held_mb: { type: 'integer', description: 'How much it held.' } },
    required: ['held_mb'],
  },
  examples: [{ name: 'Nothing held', input: { megabytes: 0 }, output: { held_mb: 0 } }],
});

/** An isolated tool that holds `megabytes` of strings on its heap: past its thread's limit, the thread ends. */
@Tool(definition)
export class MemoryHogIsolatedTool implements ToolHandler<typeof definition> {
  async execute(input: ToolInput<typeof definition>, _ctx: ToolContext<typeof definition>): Promise<ToolOutput<typeof definition>> {
    const megabytes = input.megabytes ?? 0;
    if (input.at_once) return { held_mb: Math.round(new Array<number>(megabytes * 131_072).fill(0.5).length / 131_072) };
    const held: string[][] = [];
    // Distinct strings of about 1 MB per row of 16,384 (each short string takes about 64 bytes with its slot).
    for (let mb = 0; mb < megabytes; mb++) held.push(Array.from({ length: 16_384 }, (_, i) => `${mb}:${i}`));
    return { held_mb: held.length };
  }
}
