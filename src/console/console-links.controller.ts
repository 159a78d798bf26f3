import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { AccountMembers, memberView } from '../sessions/account-members.service';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { sessionView } from '../sessions/session-view';

/** Console access for an account holder with keys:manage: sign-in links, the sessions they opened, and the members single sign-on admitted. */
@Controller('v1/console')
@RequireScopes('keys:manage')
export class ConsoleLinksController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly members: AccountMembers,
  ) {}

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

  @Get('members')
  async listMembers(@CurrentPrincipal() principal: Principal) {
    const members = await this.members.list(principal.accountId);
    return { members: members.map(memberView), total: members.length };
  }

  /** Ends the membership and the member's sessions; a rule that still maps them admits them again at their next sign-in. */
  @Delete('members/:member_id')
  @HttpCode(204)
  async removeMember(@CurrentPrincipal() principal: Principal, @Param('member_id') memberId: string): Promise<void> {
    await this.members.remove(principal.accountId, memberId);
  }
}
