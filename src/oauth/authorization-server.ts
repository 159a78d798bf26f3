import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyInstance } from 'fastify';
import type * as Jose from 'jose';
import { Repository } from 'typeorm';
import { fetch as undiciFetch } from 'undici';
import { AppConfig, BUILTIN_ISSUER_PATH, INTERACTION_PATH } from '../config/app-config';
import { SCOPES } from '../identity/scopes';
import { Account } from '../keys/account.entity';
import { SecretsService } from '../secrets/secrets.service';
import { WindowStore } from '../limits/window-store';
import { EgressPool, egressSettingsOf } from '../tools/egress/egress';
import { importEsm } from '../tools/sdk/import-esm';
import { FIRST_SCOPES, resourceIdentifier } from '../auth/protected-resource';
import { ConsentPage } from './consent-page';
import { limitOAuthEndpoint } from './endpoint-limits';
import { inMainRealm } from './main-realm';
import { OAuthRecord } from './oauth-record.entity';
import { GRANT_TOOLS_MODEL, OAuthStore, purgeExpiredOAuthRecords } from './oauth-store';
import { loadServerKeys } from './signing-keys';

/** Access tokens are not looked up, so revoking a grant ends them only when they expire: kept short. */
export const ACCESS_TOKEN_TTL_SECONDS = 300;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
const GRANT_TTL_SECONDS = 90 * 24 * 3600;
const INTERACTION_TTL_SECONDS = 600;
const CODE_TTL_SECONDS = 60;
const PURGE_EVERY_MS = 10 * 60_000;

/** The slice of oidc-provider's API this module uses (the package ships no types). */
export interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: object, options?: object): Promise<void>;
  Grant: new (init: { accountId: string; clientId: string }) => OidcGrant;
  Client: { find(id: string): Promise<{ clientId: string; clientName?: string; metadata(): Record<string, unknown> } | undefined> };
  proxy: boolean;
  on(event: 'server_error', listener: (ctx: unknown, err: Error) => void): void;
}
export interface InteractionDetails {
  uid: string;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, string | undefined>;
}
interface OidcGrant {
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  rejectResourceScope(resource: string, scope: string): void;
  rejectOIDCScope(scope: string): void;
  save(): Promise<string>;
}

/**
 * The built-in OAuth 2.1 authorization server (docs/authorization.md#the-built-in-authorization-server):
 * oidc-provider mounted at PUBLIC_URL/oauth on the service's own Fastify, storing in oauth_records,
 * signing JWT access tokens for the two resources of src/auth/protected-resource.ts.
 */
@Injectable()
export class AuthorizationServer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AuthorizationServer.name);
  private provider?: OidcProvider;
  private handle?: (req: IncomingMessage, res: ServerResponse) => void;
  private purge?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly egresses: EgressPool,
    private readonly secrets: SecretsService,
    private readonly consent: ConsentPage,
    private readonly windows: WindowStore,
    @InjectRepository(OAuthRecord) private readonly records: Repository<OAuthRecord>,
    @InjectRepository(Account) private readonly accounts: Repository<Account>,
  ) {}

  get enabled(): boolean {
    return this.config.OAUTH_BUILTIN === 'true';
  }

  /** The running provider, for the consent page. */
  get oidc(): OidcProvider {
    if (!this.provider) throw new Error('The built-in authorization server is not running');
    return this.provider;
  }

  get resources(): string[] {
    return [resourceIdentifier(this.config, '/v1/mcp'), resourceIdentifier(this.config, '/v1')];
  }

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const jose = await importEsm<typeof Jose>('jose');
    const keys = await loadServerKeys(this.records, this.secrets, jose);
    const { default: Provider, errors } = await importEsm<{ default: new (issuer: string, configuration: object) => OidcProvider; errors: Record<string, new (message?: string) => Error> }>('oidc-provider');
    const provider = new Provider(this.config.OAUTH_ISSUER!, inMainRealm(this.configuration(keys, errors)));
    // Its own 500s say only "oops": the cause goes to the log (never a token: oidc-provider's errors carry none).
    provider.on('server_error', (_ctx: unknown, err: Error) => this.logger.error(`Authorization server error: ${err.message}`, err.stack));
    provider.proxy = true; // PUBLIC_URL is what clients use; behind a proxy X-Forwarded-* say so
    this.provider = provider;
    this.handle = provider.callback();
    this.mount(this.adapterHost.httpAdapter.getInstance<FastifyInstance>());
    this.purge = setInterval(() => void purgeExpiredOAuthRecords(this.records).catch((err: Error) => this.logger.warn(`Cannot purge expired OAuth records: ${err.message}`)), PURGE_EVERY_MS).unref();
    this.logger.log(`Built-in authorization server at ${this.config.OAUTH_ISSUER}`);
  }

  onModuleDestroy(): void {
    clearInterval(this.purge);
  }

  /**
   * Hands requests under the issuer's path (and RFC 8414's path-inserted metadata URL) to oidc-provider
   * before Fastify reads their body: it parses its own forms. The consent page is served raw too.
   * Both answer on the raw response, so the headers the earlier hooks set (security headers, request
   * id) are copied onto it; registration and the token endpoint are limited per client IP first.
   */
  private mount(fastify: FastifyInstance): void {
    const discovery = new Set([`/.well-known/oauth-authorization-server${BUILTIN_ISSUER_PATH}`, `/.well-known/openid-configuration${BUILTIN_ISSUER_PATH}`]);
    const ipLimit = this.config.OAUTH_IP_RATE_LIMIT;
    fastify.addHook('onRequest', async (request, reply) => {
      const url = withDefaultScope(request.raw.url ?? '/', request.method);
      const path = url.split('?')[0];
      const inner = discovery.has(path) ? '/.well-known/openid-configuration' : path.startsWith(`${BUILTIN_ISSUER_PATH}/`) ? url.slice(BUILTIN_ISSUER_PATH.length) : null;
      if (inner === null) return;
      await limitOAuthEndpoint(this.windows, ipLimit, request, path);
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      reply.hijack();
      if (path.startsWith(INTERACTION_PATH)) return void this.consent.handle(this.oidc, this.resources, request.raw, reply.raw);
      const raw = request.raw as IncomingMessage & { originalUrl?: string };
      raw.originalUrl = discovery.has(path) ? `${BUILTIN_ISSUER_PATH}${inner}` : url;
      raw.url = inner;
      this.handle!(raw, reply.raw);
    });
  }

  private configuration(keys: Awaited<ReturnType<typeof loadServerKeys>>, errors: Record<string, new (message?: string) => Error>): object {
    const resources = this.resources;
    return {
      adapter: (model: string) => new OAuthStore(this.records, model),
      jwks: keys.jwks,
      cookies: { keys: keys.cookieKeys, long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
      clients: [],
      responseTypes: ['code'],
      pkce: { required: () => true },
      scopes: ['openid', 'offline_access', ...SCOPES],
      claims: { openid: ['sub'] },
      clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', id_token_signed_response_alg: 'ES256' },
      enabledJWA: { idTokenSigningAlgValues: ['ES256'], requestObjectSigningAlgValues: ['ES256'] },
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_SECONDS,
        AuthorizationCode: CODE_TTL_SECONDS,
        RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
        Grant: GRANT_TTL_SECONDS,
        Interaction: INTERACTION_TTL_SECONDS,
        Session: GRANT_TTL_SECONDS,
        IdToken: ACCESS_TOKEN_TTL_SECONDS,
      },
      rotateRefreshToken: true,
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
      findAccount: async (_ctx: unknown, id: string) => ((await this.accounts.existsBy({ id })) ? { accountId: id, claims: async () => inMainRealm({ sub: id }) } : undefined),
      extraTokenClaims: async (_ctx: unknown, token: { kind: string; grantId?: string }) => {
        if (token.kind !== 'AccessToken' || !token.grantId) return undefined;
        const row = await this.records.findOne({ where: { model: GRANT_TOOLS_MODEL, id: token.grantId } });
        const tools = row?.payload.tools;
        return Array.isArray(tools) ? inMainRealm({ tools }) : undefined;
      },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resources[0],
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (!resources.includes(resource)) throw new errors.InvalidTarget(`this server issues tokens only for ${resources.join(' and ')}`);
            return inMainRealm({ scope: SCOPES.join(' '), audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } });
          },
        },
      },
      // Client ID Metadata Documents and client JWKS are fetched under the egress policy, like every outbound call.
      fetch: (url: string, options: object) => undiciFetch(url, { ...options, dispatcher: this.egresses.for(egressSettingsOf(this.config)).dispatcher }),
      renderError: async (ctx: { type: string; body: string }, out: Record<string, string>) => {
        ctx.type = 'application/json';
        ctx.body = JSON.stringify({ error: { code: 'INVALID_REQUEST', message: out.error_description ?? out.error, details: { error: out.error } } });
      },
    };
  }
}

/** An authorization request naming no scope gets what a 401 challenges for: oidc-provider has no default and would refuse it. */
function withDefaultScope(url: string, method: string): string {
  const [path, query = ''] = url.split('?', 2);
  if (method !== 'GET' || path !== `${BUILTIN_ISSUER_PATH}/auth`) return url;
  const params = new URLSearchParams(query);
  if (params.get('scope')) return url;
  params.set('scope', FIRST_SCOPES['/v1/mcp'].join(' '));
  return `${path}?${params.toString()}`;
}
