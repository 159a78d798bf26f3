import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { CurrentPrincipal, Public } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { clearedSessionCookie, csrfTokenOf, sessionCookie, sessionSecretOf } from '../sessions/console-credentials';
import type { ConsoleSession } from '../sessions/console-session.entity';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { sessionView } from '../sessions/session-view';

export class SignInDto {
  @ApiProperty({ description: 'The token of a sign-in link (the part after #/sign-in/).' })
  @IsString() @Matches(/^[0-9A-Za-z]{43}$/, { message: 'token must be the token of a sign-in link' })
  token: string;
}

/**
 * /console/session: sign in with a link's token (sets the cookie), read the session (and its CSRF
 * token), sign out. Outside /v1: these are the console page's own calls, not the public API.
 */
@Controller('console/session')
export class ConsoleSessionController {
  private readonly secureCookie: boolean;

  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly config: AppConfig,
  ) {
    this.secureCookie = Boolean(config.TLS_CERT) || config.publicUrl.startsWith('https:');
  }

  @Post()
  @Public()
  @HttpCode(201)
  async signIn(@Body() body: SignInDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    assertSameOrigin(request, this.config.publicUrl);
    const { session, secret } = await this.sessions.redeem(body.token, request.headers['user-agent']);
    reply.header('set-cookie', sessionCookie(secret, this.config.CONSOLE_SESSION_MAX_SECONDS, this.secureCookie));
    return this.describe(await this.sessions.get(session.account_id, session.id), secret);
  }

  @Get()
  async current(@CurrentPrincipal() principal: Principal, @Req() request: FastifyRequest) {
    const session = await this.sessions.get(principal.accountId, sessionIdOf(principal));
    return this.describe(session, sessionSecretOf(request)!);
  }

  @Delete()
  @HttpCode(204)
  async signOut(@CurrentPrincipal() principal: Principal, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.sessions.revoke(principal.accountId, sessionIdOf(principal));
    reply.header('set-cookie', clearedSessionCookie(this.secureCookie));
  }

  private describe(session: ConsoleSession, secret: string) {
    const { account } = session;
    return {
      session: sessionView(session, this.sessions.idleUntil(session)),
      account: { id: account!.id, name: account!.name, tier: account!.tier },
      csrf_token: csrfTokenOf(secret),
    };
  }
}

function sessionIdOf(principal: Principal): string {
  if (principal.keyType !== 'session') throw AppException.invalidRequest('This request is not signed in to the console: it carries an API key');
  return principal.keyId;
}

/** Login CSRF: another site must not sign a browser in to the account of a link it holds. */
function assertSameOrigin(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && URL.canParse(origin) && (new URL(origin).host === request.headers.host || origin === new URL(publicUrl).origin)) return;
  throw new AppException('FORBIDDEN', 'Sign-in must come from the console page of this service (Origin header)');
}
