import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppException } from '../common/errors';
import { Public } from '../identity/auth.decorators';
import { ConsoleAssets } from './console-assets';

/** The page runs only this service's own scripts and styles and talks only to this service. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** GET /console: the account holder's console, a page whose scripts call /v1 with the session cookie. */
@Controller('console')
@Public()
export class ConsolePagesController {
  constructor(private readonly assets: ConsoleAssets) {}

  @Get()
  @Header('content-security-policy', CONTENT_SECURITY_POLICY)
  // Sign-in links carry their token in the fragment: no Referer may ever repeat the page's address.
  @Header('referrer-policy', 'no-referrer')
  @Header('cache-control', 'no-cache')
  async page(@Res({ passthrough: true }) reply: FastifyReply) {
    return this.send(reply, 'index.html');
  }

  @Get('assets/:name')
  @Header('cache-control', 'no-cache')
  async asset(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    if (name === 'index.html') throw new AppException('NOT_FOUND', `No such console file: ${name}`);
    return this.send(reply, name);
  }

  private async send(reply: FastifyReply, name: string): Promise<Buffer> {
    const asset = await this.assets.get(name);
    if (!asset) throw new AppException('NOT_FOUND', `No such console file: ${name}`);
    reply.header('content-type', asset.type);
    return asset.body;
  }
}
