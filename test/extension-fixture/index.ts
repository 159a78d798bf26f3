import { Module } from '@nestjs/common';
import { QuoteClientsModule } from './quote-clients.module';
import { QuoteOfTheDayTool } from './quote-of-the-day.tool';

/** What EXTENSION_MODULES loads: a module whose tool injects the client its own imported module provides. */
@Module({ imports: [QuoteClientsModule], providers: [QuoteOfTheDayTool] })
export class QuoteExtensionModule {}

export { QuoteClients } from './quote-clients';
