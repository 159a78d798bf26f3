import { createHash } from 'node:crypto';
import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

const definition = defineTool({
  id: 'test-secret-isolated',
  name: 'Secret probe (isolated)',
  category: 'integration',
  description: "Test tool: the SHA-256 of the PROBE_TOKEN it sees (the account's, else the operator's).",
  version: '1.0.0',
  isolated: true,
  input: {
    type: 'object',
    properties: {},
  },
  output: {
    type: 'object',
    properties: { sha256: { type: ['string', 'null'], description: 'SHA-256 of the value seen, null when none.' } },
    required: ['sha256'],
  },
  config: { PROBE_TOKEN: { type: 'string', secret: true, description: 'The secret the probe reads.' } },
  examples: [{ name: 'probe', input: {}, output: { sha256: null } }],
});

/** An isolated tool that reads its declared secret setting: which value did the thread get? */
@Tool(definition)
export class SecretProbeIsolatedTool implements ToolHandler<typeof definition> {
  async execute(_input: ToolInput<typeof definition>, ctx: ToolContext<typeof definition>): Promise<ToolOutput<typeof definition>> {
    const value = await ctx.secrets.find('PROBE_TOKEN');
    return { sha256: value === undefined ? null : createHash('sha256').update(value).digest('hex') };
  }
}
