import { Module } from '@nestjs/common';
import { QuoteClients } from './quote-clients';

@Module({ providers: [QuoteClients], exports: [QuoteClients] })
export class QuoteClientsModule {}
