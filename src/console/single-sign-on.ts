import { Injectable } from '@nestjs/common';
import type * as OpenIdClient from 'openid-client';
import { fetch as undiciFetch } from 'undici';
import { AppConfig } from '../config/app-config';
import { type ClaimRule, type IdentityClaims, parseClaimRules } from '../identity/claim-rules';
import { EgressPool, egressSettingsOf } from '../tools/egress/egress';
import { importEsm } from '../tools/sdk/import-esm';

/** Where the provider sends the browser back; registered at the provider as the client's redirect URI. */
export const CALLBACK_PATH = '/console/sso/callback';
const DISCOVERY_TIMEOUT_SECONDS = 5;

/** What the browser keeps between leaving for the provider and coming back (in an HttpOnly cookie). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The built-in authorization server's consent page the sign-in started from, to go back to. */
  returnTo?: string;
}

/** Who the provider signed in, from its verified ID token. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  claims: IdentityClaims;
}

/**
 * The console's OpenID Connect client (docs/authorization.md#single-sign-on), openid-client over
 * the egress policy: the authorization code flow with PKCE (S256), state and nonce, and the ID token's
 * signature checked against the provider's JWKS.
 */
@Injectable()
export class SingleSignOn {
  readonly rules: ClaimRule[];
  private client?: Promise<typeof OpenIdClient>;
  private configuration?: Promise<OpenIdClient.Configuration>;

  constructor(
    private readonly config: AppConfig,
    private readonly egresses: EgressPool,
  ) {
    this.rules = config.OIDC_ISSUER ? parseClaimRules(config.OIDC_RULES!) : [];
  }

  get enabled(): boolean {
    return this.config.OIDC_ISSUER !== undefined;
  }

  get providerName(): string {
    return this.config.OIDC_PROVIDER_NAME;
  }

  get redirectUri(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  /** The provider's authorization URL for a new sign-in, and what to check when the browser comes back. */
  async begin(returnTo?: string): Promise<{ url: URL; pending: PendingSignIn }> {
    const client = await this.loadClient();
    const configuration = await this.discovered();
    const pending = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier(), ...(returnTo && { returnTo }) };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: this.config.OIDC_SCOPES,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, pending };
  }

  /**
   * The callback's URL turned into the signed-in identity: state checked, code redeemed with the
   * verifier, ID token verified (signature, issuer, audience, expiry, nonce). Throws openid-client's
   * errors for a refused or failed exchange.
   */
  async complete(callbackUrl: URL, pending: PendingSignIn): Promise<ProviderIdentity> {
    const client = await this.loadClient();
    const configuration = await this.discovered();
    const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    return { issuer: claims.iss, subject: claims.sub, claims };
  }

  private loadClient(): Promise<typeof OpenIdClient> {
    return (this.client ??= importEsm<typeof OpenIdClient>('openid-client'));
  }

  /** Discovery once, tried again on the next sign-in when it failed (the provider may be back by then). */
  private discovered(): Promise<OpenIdClient.Configuration> {
    this.configuration ??= this.discover().catch((err: unknown) => {
      this.configuration = undefined;
      throw err;
    });
    return this.configuration;
  }

  private async discover(): Promise<OpenIdClient.Configuration> {
    const client = await this.loadClient();
    const issuer = new URL(this.config.OIDC_ISSUER!);
    const configuration = await client.discovery(issuer, this.config.OIDC_CLIENT_ID!, undefined, client.ClientSecretBasic(this.config.OIDC_CLIENT_SECRET!), {
      [client.customFetch]: this.fetch,
      timeout: DISCOVERY_TIMEOUT_SECONDS,
      // config validation allows plain http only on loopback (src/config/app-config.ts)
      execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
    });
    configuration[client.customFetch] = this.fetch;
    client.enableNonRepudiationChecks(configuration);
    return configuration;
  }

  /** Every request to the provider (discovery, JWKS, token) goes through the egress policy. */
  private readonly fetch = (url: string, options: OpenIdClient.CustomFetchOptions): Promise<Response> => {
    const dispatcher = this.egresses.for(egressSettingsOf(this.config)).dispatcher;
    return undiciFetch(url, { ...(options as object), redirect: 'error', dispatcher }) as unknown as Promise<Response>;
  };
}
