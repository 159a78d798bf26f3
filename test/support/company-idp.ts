/**
 * A company identity provider on loopback for single sign-on tests: its own oidc-provider instance
 * (not the service's built-in one), one confidential client, users with `email` and `groups`
 * claims in their ID tokens and in the JWT access tokens it issues for any resource asked for.
 * Its login is the test's: the browser is signed in as whoever `signInAs` names, as if they had
 * typed their password. Everything after that (codes, PKCE, tokens, signatures) is oidc-provider's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type * as Jose from 'jose';
import { inMainRealm } from '../../src/oauth/main-realm';
import { importEsm } from '../../src/tools/sdk/import-esm';
import { listenHttp } from './http-listen';

export interface CompanyUser {
  email: string;
  email_verified?: boolean;
  groups: string[];
}

export interface CompanyIdp {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The people the provider knows, by subject: change a user's groups between sign-ins as an admin would. */
  users: Map<string, CompanyUser>;
  /** Who the next login at the provider signs in as. */
  signInAs(subject: string): void;
  /** Requests served so far, by path (discovery, JWKS, token: what the service fetched). */
  readonly served: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

/** Scopes the provider puts in access tokens for any resource: what a company IdP's admin would configure for the service. */
const RESOURCE_SCOPES = 'tools:read tools:invoke executions:read';

interface Provider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ prompt: { name: string }; params: Record<string, string | undefined>; session?: { accountId: string } }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: object, options?: object): Promise<void>;
  Grant: new (init: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; addResourceScope(resource: string, scope: string): void; save(): Promise<string> };
}

export async function startCompanyIdp(options: { redirectUris: string[] }): Promise<CompanyIdp> {
  const jose = await importEsm<typeof Jose>('jose');
  const { default: ProviderClass } = await importEsm<{ default: new (issuer: string, configuration: object) => Provider }>('oidc-provider');
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await jose.exportJWK(privateKey)), kid: 'company-1', alg: 'RS256', use: 'sig' };
  const users = new Map<string, CompanyUser>();
  const clientId = 'tos-console';
  const clientSecret = 'company-idp-client-secret-for-tos-console';
  let current: string | null = null;
  let provider: Provider | undefined;
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;

  const claimsOf = (subject: string) => {
    const user = users.get(subject)!;
    return { email: user.email, email_verified: user.email_verified ?? true, groups: user.groups };
  };

  const served = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    served.set(path, (served.get(path) ?? 0) + 1);
    if (req.url?.startsWith('/interaction/')) return void interact(req, res).catch((err: Error) => res.writeHead(500).end(err.message));
    handle!(req, res);
  });
  const listening = await listenHttp(server);

  /** Login as the current user, then consent to whatever the client asked (a company app pre-approved by its admin). */
  async function interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider!.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      if (!current) return void res.writeHead(403).end('nobody signs in here');
      return provider!.interactionFinished(req, res, inMainRealm({ login: { accountId: current } }), inMainRealm({ mergeWithLastSubmission: false }));
    }
    const grant = new provider!.Grant(inMainRealm({ accountId: details.session!.accountId, clientId: details.params.client_id! }));
    grant.addOIDCScope(details.params.scope ?? 'openid');
    if (details.params.resource) grant.addResourceScope(details.params.resource, RESOURCE_SCOPES);
    const grantId = await grant.save();
    return provider!.interactionFinished(req, res, inMainRealm({ consent: { grantId } }), inMainRealm({ mergeWithLastSubmission: true }));
  }

  provider = new ProviderClass(
    listening.url,
    inMainRealm({
      clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
      jwks: { keys: [signingKey] },
      cookies: { keys: ['company-idp-cookie-key-0123456789'] },
      pkce: { required: () => true },
      scopes: ['openid', 'email', 'groups', 'offline_access'],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
      // Claims in the ID token itself, as company IdPs are configured to do for group-based access.
      conformIdTokenClaims: false,
      findAccount: async (_ctx: unknown, subject: string) =>
        users.has(subject) ? inMainRealm({ accountId: subject, claims: async () => inMainRealm({ sub: subject, ...claimsOf(subject) }) }) : undefined,
      extraTokenClaims: async (_ctx: unknown, token: { kind: string; accountId?: string }) =>
        token.kind === 'AccessToken' && token.accountId && users.has(token.accountId) ? inMainRealm(claimsOf(token.accountId)) : undefined,
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) =>
            inMainRealm({ scope: RESOURCE_SCOPES, audience: resource, accessTokenTTL: 300, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
        },
      },
    }),
  );
  handle = provider.callback();

  return {
    url: listening.url,
    clientId,
    clientSecret,
    users,
    signInAs: (subject) => void (current = subject),
    served,
    close: listening.close,
  };
}
