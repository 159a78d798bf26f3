import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppConfig } from '../config/app-config';
import { Public } from '../identity/auth.decorators';
import { ToolCatalogue } from '../tools/tool-catalogue';
import { mcpCatalog, serverCard, SERVER_CARD_MEDIA_TYPE } from './mcp-server-card';

/**
 * Pre-connection discovery (docs/mcp.md "Server Card"), public and the same for everyone: the
 * Server Card at the endpoint's reserved `/server-card` and at the well-known path most published
 * cards use, and the host's MCP Catalog pointing at it. Readable from any browser origin.
 */
@Controller()
@Public()
export class McpServerCardController {
  constructor(
    private readonly config: AppConfig,
    private readonly catalogue: ToolCatalogue,
  ) {}

  @Get(['v1/mcp/server-card', '.well-known/mcp/server-card.json'])
  card(@Res({ passthrough: true }) reply: FastifyReply) {
    discoverable(reply, SERVER_CARD_MEDIA_TYPE);
    return serverCard(this.config, this.catalogue);
  }

  @Get('.well-known/mcp/catalog.json')
  catalog(@Res({ passthrough: true }) reply: FastifyReply) {
    discoverable(reply, 'application/json');
    return mcpCatalog(this.config);
  }
}

/** As discovery documents are served: any origin may read them, caches may keep them a while (they change with a deploy). */
function discoverable(reply: FastifyReply, mediaType: string): void {
  reply.header('content-type', `${mediaType}; charset=utf-8`).header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300');
}
