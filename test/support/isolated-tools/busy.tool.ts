import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

const definition = defineTool({
  id: 'test-busy-isolated',
  name: 'Busy (isolated)',
  category: 'analysis',
  description: 'Test tool: spins the CPU for spin_ms, ignoring cancel and timeout.',
  version: '1.0.0',
  isolated: true,
  input: {
    type: 'object',
    properties: { spin_ms: { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long to spin.' } },
  },
  output: {
    type: 'object',
    properties: { spun_ms: { type: 'integer', description: 'How long it spun.' } },
    required: ['spun_ms'],
  },
  examples: [{ name: 'No spin', input: { spin_ms: 0 }, output: { spun_ms: 0 } }],
});

/** An isolated tool that reports progress, logs, then burns CPU without ever looking at its signal. */
@Tool(definition)
export class BusyIsolatedTool implements ToolHandler<typeof definition> {
  async execute(input: ToolInput<typeof definition>, ctx: ToolContext<typeof definition>): Promise<ToolOutput<typeof definition>> {
    const spin = input.spin_ms ?? 0;
    if (spin > 0) ctx.progress(50, 'spinning');
    ctx.logger.info('spinning', { spin_ms: spin });
    const until = Date.now() + spin;
    while (Date.now() < until) {
      // Busy on purpose: only terminating the thread stops this.
    }
    return { spun_ms: spin };
  }
}
