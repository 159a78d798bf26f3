import { createHash } from 'node:crypto';
import { Tool, type ToolContext, type ToolHandler } from '@tos/sdk';

/** An isolated tool that reads its declared secret setting: which value did the thread get? */
@Tool({
  id: 'test-secret-isolated',
  name: 'Secret probe (isolated)',
  category: 'integration',
  description: "Test tool: the SHA-256 of the PROBE_TOKEN it sees (the account's, else the operator's).",
  version: '1.0.0',
  isolated: true,
  inputs: {},
  outputs: { sha256: { type: 'string', nullable: true, description: 'SHA-256 of the value seen, null when none.' } },
  config: { PROBE_TOKEN: { type: 'string', secret: true, description: 'The secret the probe reads.' } },
  examples: [{ name: 'probe', input: {}, output: { sha256: null } }],
})
export class SecretProbeIsolatedTool implements ToolHandler<Record<string, never>, { sha256: string | null }> {
  async execute(_input: Record<string, never>, ctx: ToolContext): Promise<{ sha256: string | null }> {
    const value = await ctx.secrets.find('PROBE_TOKEN');
    return { sha256: value === undefined ? null : createHash('sha256').update(value).digest('hex') };
  }
}
