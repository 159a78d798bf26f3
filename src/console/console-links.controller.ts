import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { sessionView } from '../sessions/session-view';

/** Console access for an account holder with keys:manage: sign-in links, and the sessions they opened. */
@Controller('v1/console')
@RequireScopes('keys:manage')
export class ConsoleLinksController {
  constructor(private readonly sessions: ConsoleSessions) {}

  /** The session it opens holds the caller's scopes and tools, never more. */
  @Post('links')
  @HttpCode(201)
  createLink(@CurrentPrincipal() principal: Principal) {
    return this.sessions.createLink(principal.accountId, { keyId: principal.keyId, scopes: principal.scopes, toolIds: principal.toolIds });
  }

  @Get('sessions')
  async list(@CurrentPrincipal() principal: Principal) {
    const sessions = await this.sessions.listOpen(principal.accountId);
    return { sessions: sessions.map((session) => sessionView(session, this.sessions.idleUntil(session))), total: sessions.length };
  }

  @Delete('sessions/:session_id')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('session_id') sessionId: string) {
    const session = await this.sessions.revoke(principal.accountId, sessionId);
    return sessionView(session, this.sessions.idleUntil(session));
  }
}
