/**
 * The handler's types come from the definition: `npm run lint:types` (tsc) fails when a line marked
 * `@ts-expect-error` compiles, so these cases hold the inference to the schema both ways.
 */
import { defineTool, type ToolContext, type ToolInput, type ToolOutput } from './index';

const definition = defineTool({
  id: 'typed',
  name: 'Typed',
  category: 'analysis',
  description: 'Types read from the definition.',
  version: '1.0.0',
  input: {
    type: 'object',
    properties: {
      text: { type: 'string', maxLength: 10, description: 'Required.' },
      times: { type: 'integer', minimum: 1, maximum: 3, default: 1, description: 'Defaulted.' },
      mode: { type: 'string', enum: ['plain', 'loud'], description: 'Optional.' },
    },
    required: ['text'],
  },
  output: {
    type: 'object',
    properties: { echo: { type: 'string', description: 'Always.' }, note: { type: ['string', 'null'], description: 'May be null.' } },
    required: ['echo', 'note'],
  },
  config: { LIMIT: { type: 'integer', default: 3, description: 'With a default.' }, TOKEN: { type: 'string', secret: true, description: 'Without.' } },
  examples: [{ name: 'x', input: { text: 'a' }, output: { echo: 'a', note: null } }],
});

type Input = ToolInput<typeof definition>;
type Output = ToolOutput<typeof definition>;

describe('types inferred from a definition', () => {
  it('types the input: required and defaulted members present, the others optional, enums as unions', () => {
    const input: Input = { text: 'a', times: 1 };
    const mode: 'plain' | 'loud' | undefined = input.mode;
    // @ts-expect-error a required member cannot be left out
    const missing: Input = { times: 1 };
    // @ts-expect-error an enum member takes only its values
    const wrong: Input = { text: 'a', times: 1, mode: 'quiet' };
    expect([input.text, mode, missing, wrong]).toHaveLength(4);
  });

  it('types the output: members listed in required are there, null only where the type allows it, no others', () => {
    const output: Output = { echo: 'a', note: null };
    // @ts-expect-error a member not declared is refused (the published schema closes the object)
    const extra: Output = { echo: 'a', note: null, more: 1 };
    // @ts-expect-error null only where the type lists it
    const nullEcho: Output = { echo: null, note: 'n' };
    expect([output, extra, nullEcho]).toHaveLength(3);
  });

  it('types ctx.config from the declared settings', () => {
    const config = {} as ToolContext<typeof definition>['config'];
    const limit: number = config.LIMIT;
    // @ts-expect-error a setting without a default may be unset
    const token: string = config.TOKEN;
    expect([limit, token]).toHaveLength(2);
  });
});
