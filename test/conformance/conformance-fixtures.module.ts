/**
 * Test-only extension module: the fixture tools, resources and prompts the MCP conformance suite
 * calls, written with the tool SDK like any extension (tools run through the same validation,
 * admission and runner). The suite names tools in snake_case, so each declares its MCP name; the
 * content-returning ones declare their MCP content (text, image, audio, embedded resource) with
 * `contentBlocksOutput`.
 */
import { Module } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  contentBlocksOutput,
  Prompt,
  Resource,
  Tool,
  ToolError,
  type AskingContext,
  type PromptHandler,
  type ResourceHandler,
  type ToolContext,
  type InputRules,
  type ToolDefinition,
  type ToolInputSchema,
  type InputRequest,
  type ToolHandler,
} from '@tos/sdk';

/** A 1×1 red PNG and a minimal WAV, as the suite's reference server sends them. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

type Blocks = Record<string, unknown>[];

/** A fixture tool answering with fixed MCP content. */
function contentFixture(mcpName: string, description: string, content: Blocks): ToolDefinition {
  return {
    id: `conformance-${mcpName.replace(/^test_/, '').replace(/_/g, '-')}`,
    name: mcpName,
    category: 'automation',
    description,
    version: '1.0.0',
    effects: 'read',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: { content: contentBlocksOutput('What the suite expects back.') }, required: ['content'] },
    examples: [{ name: 'call', input: {}, output: { content } }],
    mcp: { name: mcpName, content: 'content' },
  };
}

/** The class of a fixture tool that always answers `content`. */
function answering(mcpName: string, description: string, content: Blocks): new () => ToolHandler {
  class Fixture implements ToolHandler {
    async execute() {
      return { content };
    }
  }
  Tool(contentFixture(mcpName, description, content))(Fixture);
  return Fixture;
}

const SIMPLE_TEXT = [{ type: 'text', text: 'This is a simple text response for testing.' }];
const IMAGE = [{ type: 'image', data: PNG, mimeType: 'image/png' }];
const AUDIO = [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }];
const EMBEDDED = [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }];
const MIXED = [
  { type: 'text', text: 'Multiple content types test:' },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
];

const CONTENT_FIXTURES = [
  answering('test_simple_text', 'Tests simple text content response.', SIMPLE_TEXT),
  answering('test_image_content', 'Tests image content response.', IMAGE),
  answering('test_audio_content', 'Tests audio content response.', AUDIO),
  answering('test_embedded_resource', 'Tests embedded resource content response.', EMBEDDED),
  answering('test_multiple_content_types', 'Tests response with multiple content types (text, image, resource).', MIXED),
];

@Tool(contentFixture('test_error_handling', 'Tests error response handling: always fails.', []))
export class ErrorHandlingFixture implements ToolHandler {
  async execute(): Promise<never> {
    throw new ToolError('This tool intentionally returns an error for testing');
  }
}

/** The runner passes on at most one progress report per 250 ms (streams and the database alike): the steps are spaced for it. */
const PROGRESS_STEP_MS = 300;

@Tool(contentFixture('test_tool_with_progress', 'Tests a tool that reports progress: 0, 50 and 100 of 100.', [{ type: 'text', text: 'done' }]))
export class ProgressFixture implements ToolHandler {
  async execute(_input: unknown, ctx: ToolContext) {
    for (const percent of [0, 50, 100]) {
      ctx.progress(percent, `Completed step ${percent} of 100`);
      await sleep(PROGRESS_STEP_MS, undefined, { signal: ctx.signal });
    }
    return { content: [{ type: 'text', text: 'done' }] };
  }
}

/** SEP-1613 / SEP-2106: rules across inputs published, and enforced, in JSON Schema 2020-12. */
@Tool(
  taskFixture(
    'json_schema_2020_12_tool',
    'Tool with JSON Schema 2020-12 features: a contact by phone or email, whichever contactMethod says.',
    {
      name: { type: 'string', description: 'Who.', maxLength: 100 },
      address: { type: 'object', description: 'Where.', $ref: '#/$defs/address' },
      contactMethod: { type: 'string', description: 'How to reach them.', enum: ['phone', 'email'] },
      phone: { type: 'string', description: 'A phone number.', maxLength: 40 },
      email: { type: 'string', description: 'An email address.', maxLength: 254 },
    },
    {
      rules: {
        $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string', maxLength: 200 }, city: { type: 'string', maxLength: 100 } } } },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
      },
      examples: [{ name: 'by email', input: { email: 'ada@example.com' }, output: { content: [{ type: 'text', text: 'Contact someone at ada@example.com' }] } }],
    },
  ),
)
export class JsonSchema2020Fixture implements ToolHandler {
  async execute({ name, phone, email }: { name?: string; phone?: string; email?: string }) {
    return text(`Contact ${name ?? 'someone'} at ${phone ?? email}`);
  }
}

/** SEP-2243: inputs mirrored into Mcp-Param-* headers, which must agree with the body. */
@Tool(
  taskFixture('test_custom_headers', 'Echoes inputs a client mirrors into Mcp-Param-* headers.', {
    region: { type: 'string', description: 'A region.', maxLength: 100, 'x-mcp-header': 'Region' },
    priority: { type: 'integer', description: 'A priority.', minimum: -1000, maximum: 1000, 'x-mcp-header': 'Priority' },
    verbose: { type: 'boolean', description: 'Say more.', 'x-mcp-header': 'Verbose' },
    query: { type: 'string', description: 'Not mirrored.', maxLength: 1000 },
  }),
)
export class CustomHeadersFixture implements ToolHandler {
  async execute(input: Record<string, unknown>) {
    return text(`Received: ${JSON.stringify(input)}`);
  }
}

/** The Tasks extension's fixtures: a fixture tool of the suite's, by its MCP name, with its inputs and a text answer. */
function taskFixture(mcpName: string, description: string, inputs: ToolInputSchema['properties'], { rules, ...extra }: Partial<ToolDefinition> & { rules?: InputRules } = {}): ToolDefinition {
  // The registry wants an example; these fixtures are not in the examples suite (the failing ones never yield it).
  const example = { name: 'call', input: {}, output: { content: [{ type: 'text', text: 'an answer' }] } };
  return {
    id: `conformance-${mcpName.replace(/_/g, '-')}`,
    name: mcpName,
    category: 'automation',
    description,
    version: '1.0.0',
    input: { type: 'object', properties: inputs, ...rules },
    output: { type: 'object', properties: { content: contentBlocksOutput('A text block.') }, required: ['content'] },
    examples: [example],
    mcp: { name: mcpName, content: 'content' },
    ...extra,
  };
}

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

@Tool(taskFixture('greet', 'Greets by name, at once (never a task).', { name: { type: 'string', description: 'Who to greet.', maxLength: 100, default: 'World' } }))
export class GreetFixture implements ToolHandler {
  async execute({ name }: { name: string }) {
    return text(`Hello, ${name}!`);
  }
}

@Tool(
  taskFixture(
    'slow_compute',
    'Sleeps `seconds`, then answers: a task for clients that take tasks.',
    { seconds: { type: 'number', description: 'How long to work.', minimum: 0, maximum: 120, default: 1 }, label: { type: 'string', description: 'A name for the run.', maxLength: 100, default: 'run' } },
    { task_support: 'optional', timeout: 150 },
  ),
)
export class SlowComputeFixture implements ToolHandler {
  async execute({ seconds, label }: { seconds: number; label: string }, ctx: ToolContext) {
    await sleep(seconds * 1000, undefined, { signal: ctx.signal });
    return text(`Computed ${label} in ${seconds}s`);
  }
}

@Tool(taskFixture('failing_job', 'Works a second, then reports an error; runs only as a task.', {}, { task_support: 'required' }))
export class FailingJobFixture implements ToolHandler {
  async execute(_input: unknown, ctx: ToolContext): Promise<never> {
    await sleep(1000, undefined, { signal: ctx.signal });
    throw new ToolError('The job failed, as it always does');
  }
}

@Tool(taskFixture('protocol_error_job', 'Crashes (an unexpected exception): a task that fails.', {}, { task_support: 'optional' }))
export class ProtocolErrorJobFixture implements ToolHandler {
  async execute(): Promise<never> {
    throw new TypeError('Cannot read properties of undefined (the crash this fixture is for)');
  }
}

/** The questions the input-required fixtures ask, as the suite expects them. */
const elicit = (message: string, property: string, type = 'string'): InputRequest => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties: { [property]: { type } }, required: [property] } },
});
const sample = (question: string, maxTokens: number): InputRequest => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: question } }], maxTokens },
});
const ROOTS: InputRequest = { method: 'roots/list', params: {} };

/** What an answer holds: an elicitation's field, a sampling's text, the roots' URIs. */
const field = (answer: Record<string, unknown>, name: string) => String((answer.content as Record<string, unknown> | undefined)?.[name]);
const sampled = (answer: Record<string, unknown>) => String((answer.content as { text?: string } | undefined)?.text);
const rootUris = (answer: Record<string, unknown>) => ((answer.roots as { uri: string }[] | undefined) ?? []).map(({ uri }) => uri).join(', ');

/** A fixture tool that asks its caller (`ctx.requestInput`) and answers from the answers. */
function asking(mcpName: string, description: string, ask: (ctx: ToolContext) => Promise<string>, extra: Partial<ToolDefinition> = {}): new () => ToolHandler {
  class Fixture implements ToolHandler {
    async execute(_input: unknown, ctx: ToolContext) {
      return text(await ask(ctx));
    }
  }
  Tool(taskFixture(mcpName, description, {}, extra))(Fixture);
  return Fixture;
}

const greetByName = async (ctx: ToolContext) => `Hello, ${field(await ctx.requestInput('user_name', elicit('What is your name?', 'name')), 'name')}!`;

/** SEP-2663: asks a name up front (sync rounds), then runs as a task whose result holds it. */
@Tool(taskFixture('test_tool_with_task', 'Asks your name, then greets you from a task.', {}, { task_support: 'required' }))
export class AskThenTaskFixture implements ToolHandler {
  async ask(_input: unknown, ctx: AskingContext) {
    await ctx.requestInput('user_name', elicit('What is your name?', 'name'));
  }

  async execute(_input: unknown, ctx: ToolContext) {
    const answer = await ctx.requestInput('user_name', elicit('What is your name?', 'name'));
    await sleep(200, undefined, { signal: ctx.signal });
    return text(`Hello from a task, ${field(answer, 'name')}!`);
  }
}

const INPUT_FIXTURES = [
  asking('test_input_required_result_elicitation', 'Asks for a name, then greets.', greetByName),
  asking('test_input_required_result_tampered_state', 'Asks for a name, then greets (its state must not be altered).', greetByName),
  asking('test_input_required_result_sampling', "Asks the caller's model a question.", async (ctx) => `The model answered: ${sampled(await ctx.requestInput('capital_question', sample('What is the capital of France?', 100)))}`),
  asking('test_input_required_result_list_roots', "Asks for the caller's roots.", async (ctx) => `Roots: ${rootUris(await ctx.requestInput('client_roots', ROOTS))}`),
  asking('test_input_required_result_request_state', 'Asks for a confirmation; the answer comes with the state it handed out.', async (ctx) => {
    await ctx.requestInput('confirm', elicit('Please confirm', 'ok', 'boolean'));
    return 'state-ok: the request state held and the confirmation came with it';
  }),
  asking('test_input_required_result_multiple_inputs', 'Asks three questions at once.', async (ctx) => {
    const [name, greeting, roots] = await Promise.all([
      ctx.requestInput('user_name', elicit('What is your name?', 'name')),
      ctx.requestInput('greeting', sample('Generate a greeting', 50)),
      ctx.requestInput('client_roots', ROOTS),
    ]);
    return `${sampled(greeting)} ${field(name, 'name')} (roots: ${rootUris(roots)})`;
  }),
  asking('test_input_required_result_multi_round', 'Asks a question, then another.', async (ctx) => {
    const name = field(await ctx.requestInput('step1', elicit('Step 1: What is your name?', 'name')), 'name');
    const color = field(await ctx.requestInput('step2', elicit('Step 2: What is your favorite color?', 'color')), 'color');
    return `${name} likes ${color}`;
  }),
  asking('test_input_required_result_capabilities', 'Asks only what the caller can answer: a name (elicitation) and a greeting (sampling).', async (ctx) => {
    const questions: [string, InputRequest][] = [
      ['user_name', elicit('What is your name?', 'name')],
      ['greeting', sample('Generate a greeting', 50)],
    ];
    const answers = await Promise.all(questions.filter(([, request]) => ctx.canAsk(request.method)).map(([key, request]) => ctx.requestInput(key, request)));
    return `${answers.length} answers`;
  }),
  asking('test_streaming_elicitation', 'Asks for a name: the question comes back as the answer, never as a request on the stream.', greetByName),
  asking('test_logging_tool', 'Logs (to the service log, never to the client), then answers.', async (ctx) => {
    ctx.logger.info('test_logging_tool ran');
    return 'logged';
  }),
  asking('test_missing_capability', "Needs the client's sampling capability.", async (ctx) => sampled(await ctx.requestInput('needs_sampling', sample('Say anything', 10)))),
  asking('confirm_delete', 'Asks for confirmation, then deletes (a task for clients that take tasks).', async (ctx) => {
    const answer = await ctx.requestInput('confirm', elicit('Delete the file?', 'confirm', 'boolean'));
    return answer.action === 'accept' ? 'Deleted' : 'Kept';
  }, { task_support: 'optional' }),
  asking('multi_input', 'Asks two questions at once (a task for clients that take tasks).', async (ctx) => {
    const [first, second] = await Promise.all([ctx.requestInput('first', elicit('First?', 'value')), ctx.requestInput('second', elicit('Second?', 'value'))]);
    return `${field(first, 'value')} and ${field(second, 'value')}`;
  }, { task_support: 'optional' }),
];

@Resource({ uri: 'test://static-text', name: 'static-text', description: 'A static text resource.', mimeType: 'text/plain' })
export class StaticTextResource implements ResourceHandler {
  async read(uri: string) {
    return [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }];
  }
}

@Resource({ uri: 'test://static-binary', name: 'static-binary', description: 'A static binary resource (a PNG).', mimeType: 'image/png' })
export class StaticBinaryResource implements ResourceHandler {
  async read(uri: string) {
    return [{ uri, mimeType: 'image/png', blob: PNG }];
  }
}

@Resource({ uriTemplate: 'test://template/{id}/data', name: 'template-data', description: 'Data for an id.', mimeType: 'application/json', completions: { id: ['123', '456'] } })
export class TemplateResource implements ResourceHandler {
  async read(uri: string, { id }: Readonly<Record<string, string>>) {
    return [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }];
  }
}

@Prompt({ name: 'test_simple_prompt', description: 'A simple prompt without arguments.' })
export class SimplePrompt implements PromptHandler {
  async get() {
    return [{ role: 'user' as const, content: { type: 'text' as const, text: 'This is a simple prompt for testing.' } }];
  }
}

@Prompt({
  name: 'test_prompt_with_arguments',
  description: 'A prompt with two required arguments.',
  arguments: [
    { name: 'arg1', description: 'First test argument', required: true, completions: ['paris', 'park', 'party'] },
    { name: 'arg2', description: 'Second test argument', required: true },
  ],
})
export class ArgumentsPrompt implements PromptHandler {
  async get({ arg1, arg2 }: Readonly<Record<string, string>>) {
    return [{ role: 'user' as const, content: { type: 'text' as const, text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }];
  }
}

@Prompt({ name: 'test_prompt_with_embedded_resource', description: 'A prompt embedding a resource.', arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }] })
export class EmbeddedResourcePrompt implements PromptHandler {
  async get({ resourceUri }: Readonly<Record<string, string>>) {
    return [
      { role: 'user' as const, content: { type: 'resource' as const, resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user' as const, content: { type: 'text' as const, text: 'Please process the embedded resource above.' } },
    ];
  }
}

@Prompt({ name: 'test_prompt_with_image', description: 'A prompt with an image.' })
export class ImagePrompt implements PromptHandler {
  async get() {
    return [
      { role: 'user' as const, content: { type: 'image' as const, data: PNG, mimeType: 'image/png' } },
      { role: 'user' as const, content: { type: 'text' as const, text: 'Please analyze the image above.' } },
    ];
  }
}

@Prompt({ name: 'test_input_required_result_prompt', description: 'A prompt that asks its caller for the context it should use.' })
export class AskingPrompt implements PromptHandler {
  async get(_args: Readonly<Record<string, string>>, ctx: AskingContext) {
    const answer = await ctx.requestInput('user_context', elicit('What context should the prompt use?', 'context'));
    return [{ role: 'user' as const, content: { type: 'text' as const, text: `Use this context: ${field(answer, 'context')}` } }];
  }
}

@Module({
  providers: [
    ...CONTENT_FIXTURES,
    ErrorHandlingFixture,
    ProgressFixture,
    GreetFixture,
    JsonSchema2020Fixture,
    CustomHeadersFixture,
    SlowComputeFixture,
    FailingJobFixture,
    ProtocolErrorJobFixture,
    ...INPUT_FIXTURES,
    AskThenTaskFixture,
    StaticTextResource,
    StaticBinaryResource,
    TemplateResource,
    SimplePrompt,
    ArgumentsPrompt,
    EmbeddedResourcePrompt,
    ImagePrompt,
    AskingPrompt,
  ],
})
export class ConformanceFixturesModule {}
