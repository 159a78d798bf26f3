import { Tool, type ToolContext, type ToolHandler } from '@tos/sdk';
import { QuoteClients } from './quote-clients';

@Tool({
  id: 'quote-of-the-day',
  name: 'Quote of the Day',
  category: 'integration',
  description: "Today's quote from the quotes API (a test extension's tool with an injected client).",
  version: '1.0.0',
  cacheable: true,
  open_world: true,
  inputs: { shout: { type: 'boolean', default: false, description: 'Upper-case the quote.' } },
  outputs: { text: { type: 'string', description: 'The quote.' }, author: { type: 'string', description: 'Who said it.' } },
  config: { QUOTE_API_URL: { type: 'url', default: 'https://quotes.example.test:8443', description: 'Base URL of the quotes API.' } },
  examples: [{ name: 'today', input: {}, output: { text: 'Simplicity is prerequisite for reliability.', author: 'Edsger W. Dijkstra' } }],
})
export class QuoteOfTheDayTool implements ToolHandler<{ shout: boolean }> {
  constructor(private readonly quotes: QuoteClients) {}

  async execute(input: { shout: boolean }, ctx: ToolContext) {
    const quote = await this.quotes.for(String(ctx.config.QUOTE_API_URL)).today(ctx.http);
    return input.shout ? { ...quote, text: quote.text.toUpperCase() } : quote;
  }
}
