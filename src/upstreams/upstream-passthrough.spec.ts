import { ToolError, type ToolContext } from '../tools/sdk';
import { passthroughFor } from './upstream-passthrough';

const FORM = { message: 'Your name?', requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' as const } } } };

function contextWith(answers: Record<string, unknown>, canAsk = true) {
  const progress: [number, string | undefined][] = [];
  const asked: string[] = [];
  const ctx = {
    progress: (percent: number, message?: string) => progress.push([percent, message]),
    canAsk: () => canAsk,
    requestInput: async (key: string) => {
      asked.push(key);
      if (key in answers) return answers[key];
      throw new Error('stopped for input');
    },
  } as unknown as ToolContext;
  return { ctx, progress, asked };
}

describe('passthroughFor', () => {
  it('reports progress as a percentage of total, and a message without total at the last percentage', () => {
    const { ctx, progress } = contextWith({});
    const passthrough = passthroughFor(ctx, 'up', 1_000);
    passthrough.onProgress({ progress: 1, total: 8 });
    passthrough.onProgress({ progress: 3, message: 'indexing' });
    passthrough.onProgress({ progress: 12, total: 8 });
    expect(progress).toEqual([
      [13, undefined],
      [13, 'indexing'],
      [100, undefined],
    ]);
  });

  it("reports an upstream task's status message as the progress message, at the last percentage, saying when it waits for input", () => {
    const { ctx, progress } = contextWith({});
    const passthrough = passthroughFor(ctx, 'up', 1_000);
    passthrough.onTaskStatus({ status: 'working' });
    passthrough.onProgress({ progress: 1, total: 4 });
    passthrough.onTaskStatus({ status: 'working', statusMessage: 'step 1 of 4' });
    passthrough.onTaskStatus({ status: 'input_required', statusMessage: 'Which one?' });
    passthrough.onTaskStatus({ status: 'working', statusMessage: 'x'.repeat(600) });
    expect(progress).toEqual([
      [25, undefined],
      [25, 'step 1 of 4'],
      [25, "Upstream 'up' waits for input: Which one?"],
      [25, 'x'.repeat(500)],
    ]);
  });

  it("asks the caller each elicitation of the call in turn, answering from the caller's answers", async () => {
    const { ctx, asked } = contextWith({ 'upstream-elicitation-1': { action: 'accept', content: { name: 'Ada' } } });
    const passthrough = passthroughFor(ctx, 'up', 1_000);
    await expect(passthrough.onElicit(FORM)).resolves.toEqual({ action: 'accept', content: { name: 'Ada' } });
    await expect(passthrough.onElicit(FORM)).rejects.toThrow('stopped for input');
    expect(asked).toEqual(['upstream-elicitation-1', 'upstream-elicitation-2']);
    expect(passthrough.failure).toBeUndefined();
  });

  it('fails the call, with the reason, when the caller cannot be asked or the upstream asks for a URL', async () => {
    const unaskable = passthroughFor(contextWith({}, false).ctx, 'up', 1_000);
    await expect(unaskable.onElicit(FORM)).rejects.toBeInstanceOf(ToolError);
    expect(unaskable.failure).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('cannot be asked') });

    const url = passthroughFor(contextWith({}).ctx, 'up', 1_000);
    await expect(url.onElicit({ mode: 'url', message: 'Sign in', url: 'https://example.test/sign-in', elicitationId: 'e1' })).rejects.toBeInstanceOf(ToolError);
    expect(url.failure).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('URL elicitation') });
  });
});
