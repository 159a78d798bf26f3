import { Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, Public } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { McpEndpoint } from './mcp-endpoint';
import { McpOriginPolicy } from './mcp-origin-policy';
import { missingScopes } from './mcp-scopes';
import { insufficientScope } from '../auth/protected-resource';

/**
 * /v1/mcp: the MCP Streamable HTTP endpoint, stateless, so POST only: no server-initiated stream
 * (GET) and no session to end (DELETE). Same Bearer keys, scopes and request window as REST;
 * an OAuth access token short of a scope is refused before any message runs (step-up).
 */
@Controller('v1/mcp')
export class McpController {
  private readonly origins: McpOriginPolicy;

  constructor(
    private readonly endpoint: McpEndpoint,
    private readonly config: AppConfig,
  ) {
    this.origins = new McpOriginPolicy(config);
  }

  @Post()
  @HttpCode(200)
  async post(@CurrentPrincipal() principal: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const refusal = this.origins.refusal(request.headers.host, request.headers.origin);
    if (refusal) throw new AppException('FORBIDDEN', refusal);
    if (principal.keyType === 'oauth') {
      const missing = missingScopes(principal, request.body);
      if (missing.length > 0) throw insufficientScope(request, reply, this.config, principal, missing);
    }
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
}

function methodNotAllowed(reply: FastifyReply): AppException {
  reply.header('allow', 'POST');
  return new AppException('INVALID_REQUEST', 'Method not allowed: this MCP endpoint is stateless and takes POST only (no SSE stream to open, no session to delete)', { status: 405 });
}
