import { Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput } from '@tos/sdk';
import { QuoteClients } from './quote-clients';

const definition = defineTool({
  id: 'quote-of-the-day',
  name: 'Quote of the Day',
  category: 'integration',
  description: "Today's quote from the quotes API (a test extension's tool with an injected client).",
  version: '1.0.0',
  cacheable: true,
  open_world: true,
  input: {
    type: 'object',
    properties: { shout: { type: 'boolean', default: false, description: 'Upper-case the quote.' } },
  },
  output: {
    type: 'object',
    properties: { text: { type: 'string', description: 'The quote.' }, author: { type: 'string', description: 'Who said it.' } },
    required: ['text', 'author'],
  },
  config: { QUOTE_API_URL: { type: 'url', default: 'https://quotes.example.test:8443', description: 'Base URL of the quotes API.' } },
  examples: [{ name: 'today', input: {}, output: { text: 'Simplicity is prerequisite for reliability.', author: 'Edsger W. Dijkstra' } }],
});

@Tool(definition)
export class QuoteOfTheDayTool implements ToolHandler<typeof definition> {
  constructor(private readonly quotes: QuoteClients) {}

  async execute(input: ToolInput<typeof definition>, ctx: ToolContext<typeof definition>) {
    const quote = await this.quotes.for(String(ctx.config.QUOTE_API_URL)).today(ctx.http);
    return input.shout ? { ...quote, text: quote.text.toUpperCase() } : quote;
  }
}
