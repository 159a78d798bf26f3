import { Controller, Get } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Public } from '../identity/auth.decorators';
import { protectedResourceMetadata } from './protected-resource';

/**
 * RFC 9728 protected resource metadata, public: the path-suffixed documents of the MCP endpoint
 * and the REST API, and the bare well-known path (clients that try it first) answering for MCP.
 */
@Controller('.well-known/oauth-protected-resource')
@Public()
export class ProtectedResourceController {
  constructor(private readonly config: AppConfig) {}

  @Get()
  forRoot() {
    return protectedResourceMetadata(this.config, '/v1/mcp');
  }

  @Get('v1/mcp')
  forMcp() {
    return protectedResourceMetadata(this.config, '/v1/mcp');
  }

  @Get('v1')
  forRest() {
    return protectedResourceMetadata(this.config, '/v1');
  }
}
