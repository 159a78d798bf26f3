import { Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, Public } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { McpEndpoint } from './mcp-endpoint';

/**
 * /v1/mcp: the MCP Streamable HTTP endpoint, stateless, so POST only: no server-initiated stream
 * (GET) and no session to end (DELETE). Same Bearer keys, scopes and request window as REST.
 */
@Controller('v1/mcp')
export class McpController {
  private readonly allowedOrigins: ReadonlySet<string>;

  constructor(
    private readonly endpoint: McpEndpoint,
    config: AppConfig,
  ) {
    const configured = config.MCP_ALLOWED_ORIGINS.split(',').map((origin) => origin.trim()).filter(Boolean);
    this.allowedOrigins = new Set([new URL(config.publicUrl).origin, ...configured]);
  }

  @Post()
  @HttpCode(200)
  async post(@CurrentPrincipal() principal: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    this.checkOrigin(request.headers.origin);
    await this.endpoint.handle(principal, request, reply);
  }

  @Get()
  @Public()
  get(@Res({ passthrough: true }) reply: FastifyReply): never {
    throw methodNotAllowed(reply);
  }

  @Delete()
  @Public()
  delete(@Res({ passthrough: true }) reply: FastifyReply): never {
    throw methodNotAllowed(reply);
  }

  /** A browser page may only call from an allowed origin (DNS rebinding); other clients send no Origin. */
  private checkOrigin(origin: string | undefined): void {
    if (origin === undefined || this.allowedOrigins.has('*') || this.allowedOrigins.has(origin)) return;
    throw new AppException('FORBIDDEN', `Origin '${origin}' may not use the MCP endpoint; allow it with MCP_ALLOWED_ORIGINS`);
  }
}

function methodNotAllowed(reply: FastifyReply): AppException {
  reply.header('allow', 'POST');
  return new AppException('INVALID_REQUEST', 'Method not allowed: this MCP endpoint is stateless and takes POST only (no SSE stream to open, no session to delete)', { status: 405 });
}
