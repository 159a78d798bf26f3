import { Injectable } from '@nestjs/common';
import { ToolError, type ToolHttp } from '@tos/sdk';

export interface Quote {
  [member: string]: unknown;
  text: string;
  author: string;
}

/** One quotes API: what an integration client is (Octokit, a Docker client), here in a few lines. */
export class QuoteApi {
  constructor(readonly baseUrl: string) {}

  async today(http: ToolHttp): Promise<Quote> {
    const response = await http.request(new URL('/v1/today', this.baseUrl), { parameter: 'QUOTE_API_URL', maxResponseBytes: 64 * 1024 });
    if (response.status !== 200) throw ToolError.fromResponse('quotes', response);
    return response.json<Quote>();
  }
}

/** One client per base URL for the process, injected into the tools that use it. */
@Injectable()
export class QuoteClients {
  private readonly clients = new Map<string, QuoteApi>();

  for(baseUrl: string): QuoteApi {
    let client = this.clients.get(baseUrl);
    if (!client) this.clients.set(baseUrl, (client = new QuoteApi(baseUrl)));
    return client;
  }

  get size(): number {
    return this.clients.size;
  }
}
