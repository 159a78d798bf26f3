import { Module } from '@nestjs/common';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, Tool, ToolError, type ToolContext, type ToolHandler, type ToolInput } from '@tos/sdk';

/** Test-only extension module: proves that a module's own @Tool providers are found without core changes. */

const sleepDefinition = defineTool({
  id: 'test-sleep',
  name: 'Test Sleep',
  category: 'automation',
  description: 'Sleeps for `ms` milliseconds, reporting progress; **optionally** ignores its abort signal.',
  version: '1.0.0',
  timeout: 30,
  task_support: 'optional',
  effects: 'read',
  input: {
    type: 'object',
    properties: {
      ms: { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long to sleep.' },
      ignore_signal: { type: 'boolean', default: false, description: 'Keep sleeping when aborted.' },
    },
    required: ['ms'],
  },
  output: { type: 'object', properties: { slept_ms: { type: 'integer', description: 'The time slept.' } }, required: ['slept_ms'] },
  examples: [{ name: 'no sleep', input: { ms: 0 }, output: { slept_ms: 0 } }],
});

@Tool(sleepDefinition)
export class SleepTool implements ToolHandler<typeof sleepDefinition> {
  async execute(input: ToolInput<typeof sleepDefinition>, ctx: ToolContext) {
    // Leaves a mark in the workspace when aborted, so a test can see it happen in another process.
    ctx.signal.addEventListener('abort', () => writeFileSync(path.join(ctx.workspace.root, `aborted-${ctx.executionId}`), String(process.pid)));
    const steps = 10;
    for (let i = 1; i <= steps; i++) {
      await sleep(input.ms / steps, undefined, input.ignore_signal ? {} : { signal: ctx.signal });
      ctx.progress((i / steps) * 100, `step ${i}`);
    }
    return { slept_ms: input.ms };
  }
}

@Tool({
  id: 'test-misbehave',
  name: 'Test Misbehave',
  category: 'automation',
  description: 'Fails in the way it is asked to, to test how the runner reports failures.',
  version: '2.1.0',
  effects: 'read',
  input: {
    type: 'object',
    properties: {
      mode: { type: 'string', enum: ['bad-output', 'crash', 'tool-error', 'ok'], description: 'How to fail.' },
      token: { type: 'string', maxLength: 200, writeOnly: true, description: 'A credential that must never be stored.' },
    },
    required: ['mode'],
  },
  output: { type: 'object', properties: { ok: { type: 'boolean', description: 'Always true.' } }, required: ['ok'] },
  examples: [{ name: 'ok', input: { mode: 'ok' }, output: { ok: true } }],
})
// Loosely typed on purpose: 'bad-output' returns a member the definition does not declare.
export class MisbehaveTool implements ToolHandler {
  async execute(input: { mode: string }) {
    switch (input.mode) {
      case 'bad-output':
        return { ok: true, undeclared: 1 };
      case 'crash':
        throw new TypeError('internal detail that must not leak');
      case 'tool-error':
        throw new ToolError('Upstream answered 503', { retryable: true, details: { upstream_status: 503 } });
      default:
        return { ok: true };
    }
  }
}

@Tool({
  id: 'test-record',
  name: 'Test Record',
  category: 'automation',
  description: 'Records each run as a file in the workspace (runs/<execution>.<pid>.<n>), to count runs across processes; after ms milliseconds when given.',
  version: '1.0.0',
  input: { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 10_000, default: 0, description: 'How long the run takes before it records itself.' } } },
  output: { type: 'object', properties: { recorded: { type: 'boolean', description: 'Always true; the run file names the process.' } }, required: ['recorded'] },
  examples: [{ name: 'record', input: {}, output: { recorded: true } }],
})
export class RecordTool implements ToolHandler {
  private runs = 0;

  async execute(input: { ms: number }, ctx: ToolContext) {
    if (input.ms > 0) await sleep(input.ms);
    const dir = path.join(ctx.workspace.root, 'runs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${ctx.executionId}.${process.pid}.${++this.runs}`), '');
    return { recorded: true };
  }
}

@Tool({
  id: 'test-limited',
  name: 'Test Limited',
  category: 'automation',
  description: 'Does nothing, at most 3 times a minute per key: for the per-tool rate limit.',
  version: '1.0.0',
  rate_limit: 3,
  effects: 'read',
  input: { type: 'object', properties: {} },
  output: { type: 'object', properties: { ok: { type: 'boolean', description: 'Always true.' } }, required: ['ok'] },
  examples: [{ name: 'ok', input: {}, output: { ok: true } }],
})
export class LimitedTool implements ToolHandler {
  async execute() {
    return { ok: true };
  }
}

@Module({ providers: [SleepTool, MisbehaveTool, RecordTool, LimitedTool] })
export class TestToolsModule {}
