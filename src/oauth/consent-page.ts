import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { Repository } from 'typeorm';
import { AppConfig, INTERACTION_PATH } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { SCOPES, type Scope } from '../identity/scopes';
import { sessionSecretOf } from '../sessions/console-credentials';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { ToolCatalogue } from '../tools/tool-catalogue';
import type { InteractionDetails, OidcProvider } from './authorization-server';
import { OAuthRecord } from './oauth-record.entity';
import { GRANT_TOOLS_MODEL } from './oauth-store';
import { escapeHtml } from '../common/html';

const MAX_FORM_BYTES = 64 * 1024;
const OIDC_SCOPES = new Set(['openid', 'offline_access']);

interface Consent {
  client: { id: string; name: string; uri?: string };
  resource: string;
  scopes: Scope[];
  refused: string[];
  oidcScopes: string[];
  tools: { id: string; name: string }[];
  redirectOrigin: string | null;
}

/**
 * The built-in server's interaction (docs/authorization.md#the-consent-page): GET shows who asks for
 * what; POST, from this page with the console session cookie, approves (with the tools left ticked)
 * or denies. Served raw (not by Nest) because it reads its own form body.
 */
@Injectable()
export class ConsentPage {
  private readonly logger = new Logger(ConsentPage.name);

  constructor(
    private readonly config: AppConfig,
    private readonly sessions: ConsoleSessions,
    private readonly catalogue: ToolCatalogue,
    @InjectRepository(OAuthRecord) private readonly records: Repository<OAuthRecord>,
  ) {}

  async handle(provider: OidcProvider, resources: string[], req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const details = await provider.interactionDetails(req, res).catch(() => null);
      if (!details) return this.page(res, 400, 'This sign-in request has expired or was already answered', '<p>Start again from the application.</p>');
      const principal = await this.signedIn(req);
      const consent = await this.consentOf(provider, resources, details, principal);
      if (req.method === 'GET') return this.page(res, 200, `Allow ${consent.client.name}?`, this.form(details.uid, consent, principal), consent.redirectOrigin);
      if (req.method !== 'POST') return this.page(res, 405, 'Method not allowed', '');
      if (!this.sameOrigin(req)) return this.page(res, 403, 'Refused', '<p>The form must be sent from this page.</p>');
      const form = await readForm(req);
      if (form === null) return this.page(res, 400, 'The form could not be read', '');
      if (form.get('decision') === 'deny') {
        return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The account holder denied the request' }, { mergeWithLastSubmission: false });
      }
      if (form.get('decision') !== 'approve') return this.page(res, 400, 'Choose allow or deny', '');
      if (!principal) return this.page(res, 401, 'Sign in first', '<p>Open a console sign-in link in this browser, then come back to this page and allow again.</p>');
      const ticked = new Set(form.getAll('tools'));
      const tools = consent.tools.map((tool) => tool.id).filter((id) => ticked.has(id));
      const grantId = await this.grant(provider, consent, principal, tools);
      await provider.interactionFinished(req, res, { login: { accountId: principal.accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      this.logger.warn(`Consent failed: ${(err as Error).message}`);
      if (!res.headersSent) this.page(res, 500, 'Something went wrong', '<p>Start again from the application.</p>');
    }
  }

  /**
   * A grant holds what was approved; the ticked tools (unless all of an unrestricted account's) become the
   * tokens' `tools`. The client as the page named it is kept beside them: a metadata-document client is not stored.
   */
  private async grant(provider: OidcProvider, consent: Consent, principal: Principal, tools: string[]): Promise<string> {
    const grant = new provider.Grant({ accountId: principal.accountId, clientId: consent.client.id });
    // The API's scopes are the server's too (clients register and discover them), so they are granted on both sides.
    const approved = [...consent.oidcScopes, ...consent.scopes].join(' ');
    if (approved) grant.addOIDCScope(approved);
    grant.addResourceScope(consent.resource, consent.scopes.join(' '));
    // Asked for but beyond what this session may give: refused, so the client gets the rest rather than another prompt.
    if (consent.refused.length > 0) {
      grant.rejectOIDCScope(consent.refused.join(' '));
      grant.rejectResourceScope(consent.resource, consent.refused.join(' '));
    }
    const grantId = await grant.save();
    const everyTool = principal.toolIds === null && tools.length === this.catalogue.all().length;
    await this.records.save({ model: GRANT_TOOLS_MODEL, id: grantId, payload: { tools: everyTool ? null : tools, client_name: consent.client.name, client_uri: consent.client.uri ?? null }, grant_id: grantId, uid: null, account_id: principal.accountId, expires_at: null, consumed_at: null });
    return grantId;
  }

  private async consentOf(provider: OidcProvider, resources: string[], details: InteractionDetails, principal: Principal | null): Promise<Consent> {
    const clientId = details.params.client_id ?? '';
    const client = await provider.Client.find(clientId);
    const metadata = client?.metadata() ?? {};
    const requested = (details.params.scope ?? '').split(' ').filter(Boolean);
    const held = principal?.scopes ?? new Set(SCOPES);
    const resource = details.params.resource && resources.includes(details.params.resource) ? details.params.resource : resources[0];
    const allowed = principal?.toolIds ?? null;
    let redirectOrigin: string | null = null;
    try {
      redirectOrigin = details.params.redirect_uri ? new URL(details.params.redirect_uri).origin : null;
    } catch {
      redirectOrigin = null;
    }
    return {
      client: { id: clientId, name: typeof metadata.client_name === 'string' ? metadata.client_name : clientId, uri: typeof metadata.client_uri === 'string' ? metadata.client_uri : undefined },
      resource,
      scopes: SCOPES.filter((scope) => requested.includes(scope) && held.has(scope)),
      refused: requested.filter((scope) => !OIDC_SCOPES.has(scope) && !held.has(scope as Scope)),
      oidcScopes: requested.filter((scope) => OIDC_SCOPES.has(scope)),
      tools: this.catalogue
        .all()
        .filter((tool) => allowed === null || allowed.has(tool.definition.id))
        .map((tool) => ({ id: tool.definition.id, name: tool.definition.name })),
      redirectOrigin,
    };
  }

  private async signedIn(req: IncomingMessage): Promise<Principal | null> {
    const secret = sessionSecretOf({ headers: req.headers } as FastifyRequest);
    if (!secret) return null;
    const check = await this.sessions.verify(secret);
    return check.ok ? check.principal : null;
  }

  /** Besides SameSite=Strict on the session cookie: a browser's POST names its origin, and it must be ours. */
  private sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    return origin === undefined || origin === new URL(this.config.publicUrl).origin;
  }

  private form(uid: string, consent: Consent, principal: Principal | null): string {
    const scopes = consent.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code></li>`).join('');
    const tools = consent.tools
      .map((tool) => `<li><label><input type="checkbox" name="tools" value="${escapeHtml(tool.id)}" checked> ${escapeHtml(tool.name)} <code>${escapeHtml(tool.id)}</code></label></li>`)
      .join('');
    const who = principal ? `<p>Signed in to account <code>${escapeHtml(principal.accountId)}</code>.</p>` : this.signInOffer(uid);
    const site = consent.client.uri ? ` (<a href="${escapeHtml(consent.client.uri)}" rel="noreferrer">${escapeHtml(consent.client.uri)}</a>)` : '';
    return `${who}
<p><strong>${escapeHtml(consent.client.name)}</strong>${site} asks to act for your account at <code>${escapeHtml(consent.resource)}</code>.</p>
<form method="post" action="${escapeHtml(`${this.config.OAUTH_ISSUER}/interaction/${uid}`)}">
<h2>Scopes</h2><ul>${scopes || '<li>none</li>'}</ul>
<h2>Tools it may call</h2><p>Untick the tools it should not call.</p><ul>${tools}</ul>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`;
  }

  /** How to sign in from here: a console sign-in link, or single sign-on that comes back to this page (docs/authorization.md#single-sign-on). */
  private signInOffer(uid: string): string {
    const links = '<p>You are not signed in here yet: open a console sign-in link in this browser first.</p>';
    if (!this.config.OIDC_ISSUER) return links;
    const start = `/console/sso/start?${new URLSearchParams({ return_to: `${INTERACTION_PATH}${uid}` }).toString()}`;
    return `<p>You are not signed in here yet. <a href="${escapeHtml(start)}">Sign in with ${escapeHtml(this.config.OIDC_PROVIDER_NAME)}</a>, or open a console sign-in link in this browser first.</p>`;
  }

  /** No script, no style, nothing outside this origin; the form may post here and then redirect to the client. */
  private page(res: ServerResponse, status: number, title: string, body: string, redirectOrigin: string | null = null): void {
    const nonce = randomBytes(16).toString('base64');
    const formAction = ["'self'", redirectOrigin && /^https?:\/\/[^\s;,']+$/.test(redirectOrigin) ? redirectOrigin : null].filter(Boolean).join(' ');
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; base-uri 'none'; frame-ancestors 'none'`,
      'x-content-type-options': 'nosniff',
      // same-origin, not no-referrer: with no-referrer a browser's form post says `Origin: null`, which the origin check refuses.
      'referrer-policy': 'same-origin',
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style nonce="${nonce}">body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}button{margin-right:1rem}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`);
  }
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
