import { randomBytes } from 'node:crypto';
import { Controller, Get, Logger, Query, Req, Res } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { escapeHtml } from '../common/html';
import { AppConfig, INTERACTION_PATH } from '../config/app-config';
import { matchClaimRules } from '../identity/claim-rules';
import { Public } from '../identity/auth.decorators';
import { AccountMembers } from '../sessions/account-members.service';
import { sessionCookie } from '../sessions/console-credentials';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { type PendingSignIn, SingleSignOn } from './single-sign-on';

/** Holds the pending sign-in's state, nonce and PKCE verifier from /start to the callback. */
const FLOW_COOKIE = 'tos_sso';
const FLOW_COOKIE_PATH = '/console/sso';
/** How long a browser may take at the provider. */
const FLOW_MAX_SECONDS = 600;
const MAX_GROUPS_SHOWN = 20;
/** Where a sign-in may return to: only the built-in authorization server's consent pages, never an address a link could name. */
const RETURN_TO = new RegExp(`^${INTERACTION_PATH}[A-Za-z0-9_-]{1,128}$`);

/**
 * Console sign-in through the operator's identity provider (docs/authorization.md#single-sign-on):
 * /console/sso says whether it is on, /start sends the browser to the provider, /callback brings
 * it back, maps its claims through OIDC_RULES, admits the member and opens a console session.
 * The answers are pages (the browser is navigating), never the JSON envelope, except /console/sso.
 */
@Controller('console/sso')
@Public()
export class ConsoleSsoController {
  private readonly logger = new Logger(ConsoleSsoController.name);
  private readonly secureCookie: boolean;

  constructor(
    private readonly sso: SingleSignOn,
    private readonly members: AccountMembers,
    private readonly sessions: ConsoleSessions,
    private readonly config: AppConfig,
  ) {
    this.secureCookie = Boolean(config.TLS_CERT) || config.publicUrl.startsWith('https:');
  }

  /** What the console's sign-in page offers. */
  @Get()
  describe() {
    if (!this.sso.enabled) throw new AppException('NOT_FOUND', 'Single sign-on is not configured on this service (OIDC_ISSUER)');
    return { provider: this.sso.providerName, start_url: `${FLOW_COOKIE_PATH}/start` };
  }

  @Get('start')
  @ApiProduces('text/html')
  @ApiResponse({ status: 303, description: "To the identity provider's authorization endpoint; a page (404, 503) when single sign-on is off or the provider cannot be reached." })
  async start(@Query('return_to') returnTo: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<string | void> {
    if (!this.sso.enabled) return this.page(reply, 404, 'Single sign-on is off', '<p>This service has no identity provider configured: sign in with a one-time link.</p>');
    if (returnTo !== undefined && (typeof returnTo !== 'string' || !RETURN_TO.test(returnTo))) {
      return this.page(reply, 400, 'Cannot return there', `<p>After signing in, this service goes back only to its own consent pages (${escapeHtml(INTERACTION_PATH)}…).</p>`);
    }
    let begun: Awaited<ReturnType<SingleSignOn['begin']>>;
    try {
      begun = await this.sso.begin(returnTo);
    } catch (err) {
      return this.unavailable(reply, err);
    }
    reply.header('set-cookie', this.flowCookie(Buffer.from(JSON.stringify(begun.pending)).toString('base64url'), FLOW_MAX_SECONDS));
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(begun.url.href, 303);
  }

  @Get('callback')
  @ApiProduces('text/html')
  @ApiResponse({ status: 303, description: 'Signed in (the session cookie is set): to /console. A page says why otherwise: 400 (not started here, answer refused), 403 (no rule admits the user), 503 (provider unreachable).' })
  async callback(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<string | void> {
    if (!this.sso.enabled) return this.page(reply, 404, 'Single sign-on is off', '<p>This service has no identity provider configured.</p>');
    const pending = pendingOf(request);
    // Spent or not, the pending sign-in is over (Fastify adds each Set-Cookie beside the others).
    reply.header('set-cookie', this.flowCookie('', 0));
    if (!pending) return this.page(reply, 400, 'Sign-in not started here', `<p>This browser did not start this sign-in, or took more than ${FLOW_MAX_SECONDS / 60} minutes at the identity provider.</p>${this.again()}`);

    let identity: Awaited<ReturnType<SingleSignOn['complete']>>;
    try {
      identity = await this.sso.complete(this.callbackUrl(request), pending);
    } catch (err) {
      if (!isRefusal(err)) return this.unavailable(reply, err);
      this.logger.warn(`Single sign-on refused by the exchange: ${(err as Error).message}`);
      return this.page(reply, 400, 'Sign-in failed', `<p>The identity provider's answer was not accepted: ${escapeHtml(refusalText(err))}</p>${this.again()}`);
    }

    const match = matchClaimRules(this.sso.rules, identity.claims, this.config.OIDC_GROUPS_CLAIM);
    const who = typeof identity.claims.email === 'string' ? identity.claims.email : identity.subject;
    if (!match) {
      const expelled = await this.members.expel(identity.issuer, identity.subject);
      this.logger.warn(`Single sign-on refused: no claim rule matches ${identity.subject} at ${identity.issuer}${expelled ? ` (${expelled} membership(s) ended)` : ''}`);
      return this.page(reply, 403, 'No access', `<p>You signed in at ${escapeHtml(this.sso.providerName)} as <strong>${escapeHtml(who)}</strong>${this.groupsText(identity.claims)}, but no rule of this service gives that access to an account.</p><p>Ask the operator to add a rule for one of your groups or your email's domain (OIDC_RULES), or to send you a sign-in link.</p>`);
    }
    const admitted = await this.members.admit({ issuer: identity.issuer, subject: identity.subject, email: typeof identity.claims.email === 'string' ? identity.claims.email : null }, match);
    if (!admitted) {
      await this.members.expel(identity.issuer, identity.subject);
      this.logger.error(`Single sign-on: claim rule ${match.rule} maps to account ${match.accountId}, which does not exist`);
      return this.page(reply, 403, 'No access', `<p>The rule that admits you names an account this service does not have. Tell the operator: rule ${match.rule} of OIDC_RULES.</p>`);
    }
    const { session, secret } = await this.sessions.openForMember(admitted.member, match.scopes, request.headers['user-agent']);
    this.logger.log(`Single sign-on: ${admitted.member.id} (${identity.subject}) ${admitted.joined ? 'joined' : 'signed in to'} account ${match.accountId} as ${match.role} by rule ${match.rule}; session ${session.id}`);
    reply.header('set-cookie', sessionCookie(secret, this.config.CONSOLE_SESSION_MAX_SECONDS, this.secureCookie));
    if (pending.returnTo) {
      // A page that moves on by itself, not a redirect: the navigation it starts is this site's own, so
      // the consent page gets the SameSite=Strict session cookie that a redirect chain begun at the
      // provider's site would not carry.
      const to = escapeHtml(pending.returnTo);
      return this.page(reply, 200, 'Signed in', `<p>Signed in. <a href="${to}">Continue to the consent page</a>.</p>`, `<meta http-equiv="refresh" content="0;url=${to}">`);
    }
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect('/console', 303);
  }

  /**
   * The URL the provider redirected to, as registered (PUBLIC_URL's, whatever path a proxy in front
   * strips) with the query it came with: openid-client sends it back as the token request's redirect_uri.
   */
  private callbackUrl(request: FastifyRequest): URL {
    const url = new URL(this.sso.redirectUri);
    url.search = new URL(request.url, url).search;
    return url;
  }

  private flowCookie(value: string, maxAgeSeconds: number): string {
    // Lax, not Strict: the provider's redirect back is a cross-site navigation that must carry it.
    return `${FLOW_COOKIE}=${value}; Path=${FLOW_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${this.secureCookie ? '; Secure' : ''}`;
  }

  private groupsText(claims: Record<string, unknown>): string {
    const value = claims[this.config.OIDC_GROUPS_CLAIM];
    const groups = (Array.isArray(value) ? value : [value]).filter((group): group is string => typeof group === 'string');
    if (groups.length === 0) return ' (no groups)';
    const shown = groups.slice(0, MAX_GROUPS_SHOWN).map((group) => `<code>${escapeHtml(group)}</code>`).join(', ');
    return ` (groups ${shown}${groups.length > MAX_GROUPS_SHOWN ? ', …' : ''})`;
  }

  private again(): string {
    return `<p><a href="${FLOW_COOKIE_PATH}/start">Sign in with ${escapeHtml(this.sso.providerName)} again</a></p>`;
  }

  private unavailable(reply: FastifyReply, err: unknown): string {
    this.logger.warn(`Single sign-on: the identity provider cannot be reached: ${(err as Error).message}`);
    reply.header('retry-after', '30');
    return this.page(reply, 503, 'Identity provider unavailable', `<p>${escapeHtml(this.sso.providerName)} cannot be reached just now. Try again in a minute, or sign in with a one-time link.</p>`);
  }

  /** A page of text and links: no script, one inline style by nonce, nothing from elsewhere. */
  private page(reply: FastifyReply, status: number, title: string, body: string, head = ''): string {
    const nonce = randomBytes(16).toString('base64');
    reply
      .status(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('content-security-policy', `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${head}<style nonce="${nonce}">body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}</style></head><body><h1>${escapeHtml(title)}</h1>${body}<p><a href="/console">Back to the console</a></p></body></html>`;
  }
}

/** The pending sign-in from the flow cookie, if there is a well-formed one. */
function pendingOf(request: FastifyRequest): PendingSignIn | null {
  const header = request.headers.cookie ?? '';
  const value = header
    .split(';')
    .map((pair) => pair.trim())
    .find((pair) => pair.startsWith(`${FLOW_COOKIE}=`))
    ?.slice(FLOW_COOKIE.length + 1);
  if (!value) return null;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Record<string, unknown>;
    const fields = [parsed.state, parsed.nonce, parsed.codeVerifier];
    if (!fields.every((field) => typeof field === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(field))) return null;
    const returnTo = typeof parsed.returnTo === 'string' && RETURN_TO.test(parsed.returnTo) ? parsed.returnTo : undefined;
    return { state: parsed.state as string, nonce: parsed.nonce as string, codeVerifier: parsed.codeVerifier as string, ...(returnTo && { returnTo }) };
  } catch {
    return null;
  }
}

/**
 * openid-client's errors for an answer it would not accept (a state or nonce that does not match,
 * an error from the provider, a bad ID token), as opposed to a provider that cannot be reached.
 * By name and code: the library is loaded in Node's own realm, where `instanceof` does not reach.
 */
function isRefusal(err: unknown): boolean {
  const { name, code } = err as { name?: string; code?: unknown };
  return name === 'AuthorizationResponseError' || name === 'ResponseBodyError' || (typeof code === 'string' && code.startsWith('OAUTH_') && code !== 'OAUTH_TIMEOUT');
}

function refusalText(err: unknown): string {
  const { error, error_description: description } = err as { error?: unknown; error_description?: unknown };
  if (typeof error === 'string') return typeof description === 'string' ? `${error}: ${description}` : error;
  return (err as Error).message;
}
