import { defineTool, Tool, ToolError, type ToolContext, type ToolHandler, type ToolInput, type ToolOutput } from '../sdk';
import { runTool } from '../sdk/testing';

const definition = defineTool({
  id: 'context-probe',
  name: 'Context probe',
  category: 'automation',
  description: 'Runs a command and reads a secret, for the context tests.',
  version: '1.0.0',
  input: {
    type: 'object',
    properties: {
      args: { type: 'array', description: 'Arguments to echo', items: { type: 'string' }, maxItems: 5, default: [] },
      secret: { type: 'string', description: 'Secret name', maxLength: 40 },
      wait: { type: 'boolean', description: 'Sleep until cancelled', default: false },
    },
    required: ['secret'],
  },
  output: {
    type: 'object',
    properties: { stdout: { type: 'string', description: 'Output' }, secret: { type: 'string', description: 'Secret value' }, limit: { type: 'integer', description: 'Setting' } },
    required: ['stdout', 'secret', 'limit'],
  },
  config: { PROBE_LIMIT: { type: 'integer', description: 'A limit', default: 3 }, PROBE_TOKEN: { type: 'string', description: 'A token', secret: true } },
  examples: [{ name: 'echo', input: { args: ['hi'], secret: 'PROBE_TOKEN' }, output: { stdout: 'hi\n', secret: 's', limit: 3 } }],
});

@Tool(definition)
class ContextProbe implements ToolHandler<typeof definition> {
  async execute(input: ToolInput<typeof definition>, ctx: ToolContext<typeof definition>): Promise<ToolOutput<typeof definition>> {
    const run = input.wait ? await ctx.exec('sleep', ['30']) : await ctx.exec('echo', input.args);
    // ctx.config is typed from the declaration: PROBE_LIMIT is a number (it has a default), PROBE_TOKEN a string or undefined.
    return { stdout: run.stdout, secret: await ctx.secrets.get(input.secret), limit: ctx.config.PROBE_LIMIT };
  }
}

describe('tool context', () => {
  it('runs a command, reads the account secret and typed settings', async () => {
    await expect(runTool(ContextProbe, { args: ['hi'], secret: 'PROBE_TOKEN' }, { secrets: { PROBE_TOKEN: 'acct' }, config: { PROBE_LIMIT: '9' } })).resolves.toEqual({
      stdout: 'hi\n',
      secret: 'acct',
      limit: 9,
    });
  });

  it('falls back to the declared setting, never to other environment variables', async () => {
    await expect(runTool(ContextProbe, { secret: 'PROBE_TOKEN' }, { config: { PROBE_TOKEN: 'svc' } })).resolves.toMatchObject({ secret: 'svc', limit: 3 });
    process.env.PROBE_UNDECLARED = 'leak';
    const err = await runTool(ContextProbe, { secret: 'PROBE_UNDECLARED' }).catch((e: unknown) => e);
    delete process.env.PROBE_UNDECLARED;
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: false, suggestion: expect.stringContaining('PUT /v1/secrets/PROBE_UNDECLARED') });
  });

  it('rejects a bad setting naming the variable, and bad input as INVALID_INPUT', async () => {
    await expect(runTool(ContextProbe, { secret: 'X' }, { config: { PROBE_LIMIT: 'many' } })).rejects.toThrow(/PROBE_LIMIT/);
    await expect(runTool(ContextProbe, { secret: 'X', args: 'no' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('kills the subprocess when the execution is cancelled', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    await expect(runTool(ContextProbe, { secret: 'X', wait: true }, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
