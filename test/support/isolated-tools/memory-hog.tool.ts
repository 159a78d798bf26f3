import { Tool, type ToolContext, type ToolHandler } from '@tos/sdk';

/** An isolated tool that holds `megabytes` of strings on its heap: past its thread's limit, the thread ends. */
@Tool({
  id: 'test-memory-hog-isolated',
  name: 'Memory hog (isolated)',
  category: 'analysis',
  description: 'Test tool: holds about `megabytes` MB of JavaScript heap, then returns.',
  version: '1.0.0',
  isolated: true,
  inputs: {
    megabytes: { type: 'integer', minimum: 0, maximum: 65_536, description: 'How much heap to hold.' },
    at_once: { type: 'boolean', default: false, description: 'In one allocation (past the heap limit, V8 aborts the process) rather than row by row.' },
  },
  outputs: { held_mb: { type: 'integer', description: 'How much it held.' } },
  examples: [{ name: 'Nothing held', input: { megabytes: 0 }, output: { held_mb: 0 } }],
})
export class MemoryHogIsolatedTool implements ToolHandler<{ megabytes?: number; at_once?: boolean }, { held_mb: number }> {
  async execute(input: { megabytes?: number; at_once?: boolean }, _ctx: ToolContext): Promise<{ held_mb: number }> {
    const megabytes = input.megabytes ?? 0;
    if (input.at_once) return { held_mb: Math.round(new Array<number>(megabytes * 131_072).fill(0.5).length / 131_072) };
    const held: string[][] = [];
    // Distinct strings of about 1 MB per row of 16,384 (each short string takes about 64 bytes with its slot).
    for (let mb = 0; mb < megabytes; mb++) held.push(Array.from({ length: 16_384 }, (_, i) => `${mb}:${i}`));
    return { held_mb: held.length };
  }
}
