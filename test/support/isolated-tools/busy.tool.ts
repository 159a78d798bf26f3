import { Tool, type ToolContext, type ToolHandler } from '@tos/sdk';

/** An isolated tool that reports progress, logs, then burns CPU without ever looking at its signal. */
@Tool({
  id: 'test-busy-isolated',
  name: 'Busy (isolated)',
  category: 'analysis',
  description: 'Test tool: spins the CPU for spin_ms, ignoring cancel and timeout.',
  version: '1.0.0',
  isolated: true,
  inputs: { spin_ms: { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long to spin.' } },
  outputs: { spun_ms: { type: 'integer', description: 'How long it spun.' } },
  examples: [{ name: 'No spin', input: { spin_ms: 0 }, output: { spun_ms: 0 } }],
})
export class BusyIsolatedTool implements ToolHandler<{ spin_ms?: number }, { spun_ms: number }> {
  async execute(input: { spin_ms?: number }, ctx: ToolContext): Promise<{ spun_ms: number }> {
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
