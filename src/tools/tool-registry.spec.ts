import { Injectable, Logger, Module, Scope, type Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { AppConfig, loadConfig } from '../config/app-config';
import { AppException } from '../common/errors';
import { exactlyOneOf, notBoth, Tool, type InputRules, type ToolDefinition, type ToolHandler, type ToolInputSchema } from './sdk';
import { thrownBy } from '../../test/support/thrown';
import { recordToolSource } from './isolation/tool-source';
import { ProviderExplorer } from './provider-explorer';
import { ToolCompiler, ToolDefinitionError } from './tool-compiler';
import { ToolRegistry } from './tool-registry';

const base = {
  id: 'echo',
  name: 'Echo',
  category: 'analysis',
  description: 'Echoes its text.',
  version: '1.0.0',
  input: {
    type: 'object',
    properties: {
      text: { type: 'string', maxLength: 10, description: 'Text.' },
      times: { type: 'integer', minimum: 1, maximum: 3, default: 1, description: 'Repeats.' },
      mode: { type: 'string', enum: ['plain', 'loud'], default: 'plain', description: 'Mode.' },
      tags: { type: 'array', maxItems: 2, items: { type: 'string', maxLength: 5 }, description: 'Tags.' },
    },
    required: ['text'],
  },
  output: { type: 'object', properties: { text: { type: 'string', description: 'Echo.' } }, required: ['text'] },
  examples: [{ name: 'hi', input: { text: 'hi' }, output: { text: 'hi' } }],
} satisfies ToolDefinition;

/** The base tool with these input members (added or replaced) and rules. */
const withInputs = (properties: ToolInputSchema['properties'], rules: InputRules = {}): Partial<ToolDefinition> => ({ input: { ...base.input, properties: { ...base.input.properties, ...properties }, ...rules } });

function toolClass(definition: ToolDefinition) {
  @Tool(definition)
  class AnyTool implements ToolHandler {
    async execute(input: Record<string, unknown>) {
      return { text: input.text };
    }
  }
  return AnyTool;
}

async function boot(...definitions: ToolDefinition[]): Promise<ToolRegistry> {
  return bootProviders(definitions.map(toolClass));
}

async function bootProviders(providers: Type[]): Promise<ToolRegistry> {
  @Module({ providers })
  class ExtensionModule {}
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule, ExtensionModule],
    providers: [ProviderExplorer, ToolCompiler, ToolRegistry, { provide: AppConfig, useValue: loadConfig({}) }],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(ToolRegistry);
}


describe('ToolRegistry', () => {
  it('finds @Tool providers of any module and fills in defaults', async () => {
    const registry = await boot(base);
    const tool = registry.get('echo');
    expect(tool.definition).toMatchObject({ status: 'ready', timeout: 30, rate_limit: 60, cacheable: false, effects: 'write', idempotent: false, open_world: false });
    expect(tool.summary).toMatchObject({ rate_limit: '60 calls/min', timeout: '30s' });
    expect(tool.detail).toMatchObject({ documentation: 'http://localhost:3000/v1/tools/echo/docs', examples: base.examples });
    expect(() => registry.get('nope')).toThrow(AppException);
  });

  it('validates input: defaults, stripping, and the two kinds of 400', async () => {
    const tool = (await boot(base)).get('echo');
    expect(tool.validateInput({ text: 'a', junk: true })).toEqual({ text: 'a', times: 1, mode: 'plain' });

    const missing = thrownBy<AppException>(() => tool.validateInput({ times: 2 }));
    expect(missing.code).toBe('INVALID_REQUEST');
    expect(missing.message).toBe('Missing required parameter: text');

    for (const [input, parameter, expected] of [
      [{ text: 5 }, 'text', 'string'],
      [{ text: 'x'.repeat(11) }, 'text', 'at most 10 characters'],
      [{ text: 'a', times: 9 }, 'times', 'a number <= 3'],
      [{ text: 'a', mode: 'quiet' }, 'mode', 'one of "plain", "loud"'],
      [{ text: 'a', tags: ['ok', 'too-long'] }, 'tags[1]', 'at most 5 characters'],
      [{ text: 'a', tags: ['a', 'b', 'c'] }, 'tags', 'at most 2 items'],
    ] as const) {
      const error = thrownBy<AppException>(() => tool.validateInput({ ...input }));
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.body.details).toMatchObject({ parameter, expected });
    }
  });

  it('publishes JSON Schema 2020-12 and enforces the rules across inputs', async () => {
    const rules = { if: { properties: { mode: { const: 'loud' } }, required: ['mode'] }, then: { required: ['tags'] } };
    const tool = (await boot({ ...base, ...withInputs({ mode: { ...base.input.properties.mode, 'x-mcp-header': 'Mode' } }, rules) })).get('echo');
    expect(tool.inputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...rules, properties: { mode: { 'x-mcp-header': 'Mode' } } });
    expect(tool.validateInput({ text: 'a', mode: 'loud', tags: ['x'] })).toMatchObject({ mode: 'loud' });
    expect(thrownBy(() => tool.validateInput({ text: 'a', mode: 'loud' }))).toMatchObject({ body: { details: { parameter: 'tags' } } });
  });

  it('refuses a call breaking exactlyOneOf or notBoth in words naming the inputs, and publishes no top-level oneOf, anyOf or allOf', async () => {
    const text = (description: string) => ({ type: 'string', maxLength: 10, description }) as const;
    const inputs = { content: text('Inline.'), path: text('A file.'), a: text('A.'), b: text('B.') };
    const tool = (await boot({ ...base, input: { type: 'object', properties: inputs, ...exactlyOneOf('content', 'path'), ...notBoth('a', 'b') }, examples: [{ name: 'inline', input: { content: 'hi' }, output: { text: 'hi' } }] })).get('echo');
    expect(Object.keys(tool.inputSchema).filter((key) => ['oneOf', 'anyOf', 'allOf'].includes(key))).toEqual([]);
    expect(tool.validateInput({ path: 'x.log', a: '1' })).toEqual({ path: 'x.log', a: '1' });
    expect(thrownBy<AppException>(() => tool.validateInput({})).body).toMatchObject({
      code: 'INVALID_REQUEST',
      message: "Missing required parameter: give exactly one of 'content' or 'path'",
      details: { parameter: 'content', expected: "exactly one of 'content' or 'path'" },
    });
    expect(thrownBy<AppException>(() => tool.validateInput({ content: 'x', path: 'y' })).body).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' }, message: expect.stringContaining("'content' and 'path'") });
    expect(thrownBy<AppException>(() => tool.validateInput({ content: 'x', a: '1', b: '2' })).body).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'b', expected: "at most one of 'a' or 'b'" } });
  });

  it('checks results against the declared outputs without altering them', async () => {
    const tool = (await boot(base)).get('echo');
    expect(tool.outputProblem({ text: 'x' })).toBeNull();
    const extra = { text: 'x', more: 1 };
    expect(tool.outputProblem(extra)).toMatch(/additional/);
    expect(extra).toEqual({ text: 'x', more: 1 });
    expect(tool.outputProblem({})).toMatch(/text/);
  });

  it('takes a cacheable tool for read-only and idempotent unless it says otherwise', async () => {
    const registry = await boot({ ...base, cacheable: true }, { ...base, id: 'apply', effects: 'destructive', idempotent: true, open_world: true });
    expect(registry.get('echo').definition).toMatchObject({ effects: 'read', idempotent: true, open_world: false });
    expect(registry.get('apply').definition).toMatchObject({ effects: 'destructive', idempotent: true, open_world: true });
  });

  it('filters by category, status, search and an allowed set', async () => {
    const registry = await boot(base, { ...base, id: 'scan', name: 'Scanner', category: 'security', status: 'beta', description: 'Finds things.' });
    expect(registry.list({ category: 'security' }).map((t) => t.definition.id)).toEqual(['scan']);
    expect(registry.list({ status: 'ready' }).map((t) => t.definition.id)).toEqual(['echo']);
    expect(registry.list({ search: 'FINDS' }).map((t) => t.definition.id)).toEqual(['scan']);
    expect(registry.list({ allowed: new Set(['echo']) }).map((t) => t.definition.id)).toEqual(['echo']);
  });

  it.each<[string, Partial<ToolDefinition>, RegExp]>([
    ['a bad id', { id: 'Bad_Id' }, /kebab-case/],
    ['an unknown category', { category: 'misc' as never }, /category/],
    ['a timeout over 300', { timeout: 301 }, /timeout/],
    ['no examples', { examples: [] }, /example/],
    ['an unknown effect', { effects: 'delete' as never }, /effects must be one of read, write, destructive/],
    ['a cacheable tool with side effects', { cacheable: true, effects: 'write' }, /cacheable tool must have effects 'read'/],
    ['an unbounded string', withInputs({ q: { type: 'string', description: 'q' } }), /maxLength/],
    ['an unbounded array', withInputs({ q: { type: 'array', description: 'q' } }), /maxItems/],
    ['a schema ajv refuses', withInputs({ q: { type: 'string', maxLength: 5, format: 'no-such-format', description: 'q' } }), /does not compile/],
    ['an example that breaks the inputs', { examples: [{ name: 'bad', input: {}, output: { text: '' } }] }, /example 'bad' input/],
    ['an example that breaks the outputs', { examples: [{ name: 'bad', input: { text: 'a' }, output: { wrong: 1 } }] }, /example 'bad' output/],
    ['an example whose varying member is not in its output', { examples: [{ name: 'bad', input: { text: 'a' }, output: { text: 'a' }, varies: ['latency_ms'] }] }, /example 'bad' varies: 'latency_ms'/],
    ['an mcp_header that is no HTTP token', withInputs({ mode: { ...base.input.properties.mode, 'x-mcp-header': 'The Mode' } }), /x-mcp-header must be an HTTP token/],
    ['an mcp_header on an array input', withInputs({ tags: { ...base.input.properties.tags, 'x-mcp-header': 'Tags' } }), /only a string, integer or boolean input/],
    ['two mcp_headers differing in case only', withInputs({ text: { ...base.input.properties.text, 'x-mcp-header': 'Mode' }, mode: { ...base.input.properties.mode, 'x-mcp-header': 'mode' } }), /unique/],
    ['a rule requiring an input that does not exist', withInputs({}, { anyOf: [{ required: ['text'] }, { required: ['txet'] }] }), /'txet' is required by a rule but is not an input/],
    ['a rule ajv refuses', withInputs({}, { if: { properties: { mode: { constt: 'loud' } } }, then: { required: ['tags'] } }), /does not compile/],
    ['a required member that is not an input', { input: { ...base.input, required: ['text', 'txet'] } }, /'txet' is required but is not an input/],
    ['a keyword the service would not publish', withInputs({ q: { type: 'integer', description: 'q', exclusiveMaximum: 3 } as never }), /input 'q': unknown keyword 'exclusiveMaximum'/],
    ['an output member that may be null with an enum without null', { output: { type: 'object', properties: { text: { type: ['string', 'null'], enum: ['a'], description: 'Echo.' } }, required: ['text'] } }, /must list null/],
    ['an input that is not an object schema', { input: { properties: {} } as never }, /input must be an object schema/],
  ])('stops boot on %s', async (_name, change, message) => {
    await expect(boot({ ...base, ...change })).rejects.toThrow(ToolDefinitionError);
    await expect(boot({ ...base, ...change })).rejects.toThrow(message);
  });

  it('stops boot on an isolated tool whose constructor needs arguments (a worker thread builds it without any)', async () => {
    class Clock {}
    @Tool({ ...base, isolated: true })
    class InjectingTool implements ToolHandler {
      constructor(readonly clock: Clock) {}
      async execute() {
        return { text: 'x' };
      }
    }
    recordToolSource(InjectingTool, { file: __filename, exportName: 'InjectingTool' });
    await expect(bootProviders([Clock, InjectingTool])).rejects.toThrow(/'echo' \(InjectingTool\): an isolated tool runs in a worker thread, which builds the class without arguments/);
  });

  it('skips a request-scoped tool provider, which has no single instance to serve, with a warning naming it', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    @Injectable({ scope: Scope.REQUEST })
    @Tool({ ...base, id: 'per-request' })
    class PerRequestTool implements ToolHandler {
      async execute() {
        return { text: 'x' };
      }
    }
    const registry = await bootProviders([toolClass(base), PerRequestTool]);
    expect(registry.all().map((tool) => tool.definition.id)).toEqual(['echo']);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('PerRequestTool is not a static provider'));
    warn.mockRestore();
  });

  it('stops boot on a duplicate id, naming both classes', async () => {
    await expect(boot(base, { ...base })).rejects.toThrow(/Duplicate tool id 'echo': declared by AnyTool and AnyTool/);
  });
});
