import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectRepository } from '@nestjs/typeorm';
import type * as Jose from 'jose';
import { Repository } from 'typeorm';
import { fetch as undiciFetch } from 'undici';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { type ClaimRule, matchClaimRules, parseClaimRules } from '../identity/claim-rules';
import { SCOPES, type Scope } from '../identity/scopes';
import { Account, accountLimits } from '../keys/account.entity';
import { EgressPool, egressSettingsOf } from '../tools/egress/egress';
import { importEsm } from '../tools/sdk/import-esm';
import { resourceIdentifier, type ResourcePath } from './protected-resource';

export type TokenVerification = { ok: true; principal: Principal } | { ok: false; message: string };

/** A compact JWS: three base64url parts. API keys never look like this (`sk_…`). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Asymmetric algorithms only: a shared-secret (HS*) or unsigned token must never verify against a public key set. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** The key set is fetched again after this long, or at once (at most every cooldown) when a token names a key it lacks (rotation). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
const JWKS_COOLDOWN_MS = 30_000;
const CLOCK_TOLERANCE_SECONDS = 5;
const ACCOUNT_CACHE_MAX = 10_000;
const VERIFIED_CACHE_MAX = 10_000;
const ISSUER_METADATA_TIMEOUT_MS = 5_000;

interface CachedAccount {
  account: Account | null;
  until: number;
}

/**
 * OAuth access tokens (RFC 9068 JWTs) of OAUTH_ISSUER, turned into the same Principal an API key
 * gives (docs/authorization.md#access-tokens): signature against the issuer's JWKS (cached, fetched
 * under the egress policy), issuer, audience = the resource the request is for (RFC 8707), exp and
 * nbf; `sub` is the account (or, from an external identity provider with OAUTH_SUBJECT=claims, its
 * claims mapped by OIDC_RULES), `scope` its scopes, `tools` (when present) its tool allowlist.
 */
@Injectable()
export class AccessTokenVerifier {
  private keySet?: Promise<Jose.JWTVerifyGetKey>;
  private jose?: Promise<typeof Jose>;
  private readonly accounts = new Map<string, CachedAccount>();
  /** Tokens verified lately, by resource and digest: a client sends one token many times, and its signature check is most of a token's cost. */
  private readonly verified = new LRUCache<string, { principal: Principal; until: number }>({ max: VERIFIED_CACHE_MAX });
  private readonly cacheTtlMs: number;
  private readonly rules: ClaimRule[] | null;

  constructor(
    private readonly config: AppConfig,
    private readonly egresses: EgressPool,
    @InjectRepository(Account) private readonly accountRepository: Repository<Account>,
  ) {
    this.cacheTtlMs = config.AUTH_CACHE_TTL_SECONDS * 1000;
    this.rules = config.OAUTH_SUBJECT === 'claims' ? parseClaimRules(config.OIDC_RULES!) : null;
  }

  /** Whether a bearer credential is an access token this service would verify (else it is read as an API key). */
  accepts(credential: string): boolean {
    return this.config.OAUTH_ISSUER !== undefined && COMPACT_JWS.test(credential);
  }

  async verify(token: string, resource: ResourcePath, now = Date.now()): Promise<TokenVerification> {
    const cacheKey = `${resource} ${createHash('sha256').update(token).digest('base64url')}`;
    const cached = this.verified.get(cacheKey);
    if (cached && cached.until > now) return { ok: true, principal: cached.principal };
    const verification = await this.verifyAfresh(token, resource, now);
    if (verification.ok && this.cacheTtlMs > 0) {
      this.verified.set(cacheKey, { principal: verification.principal, until: Math.min(verification.principal.expiresAt!.getTime(), now + this.cacheTtlMs) });
    }
    return verification;
  }

  private async verifyAfresh(token: string, resource: ResourcePath, now: number): Promise<TokenVerification> {
    const jose = await this.loadJose();
    const keys = await this.keys().catch((err: unknown) => {
      throw issuerUnavailable(err);
    });
    let payload: Jose.JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, keys, {
        issuer: this.config.OAUTH_ISSUER,
        audience: resourceIdentifier(this.config, resource),
        algorithms: ALGORITHMS,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(now),
      }));
    } catch (err) {
      return { ok: false, message: refusalOf(err as Error, jose, resourceIdentifier(this.config, resource)) };
    }
    if (typeof payload.sub !== 'string') return { ok: false, message: "Invalid access token: the 'sub' claim is missing or wrong" };
    const subject = this.subjectOf(payload);
    if (!subject) return { ok: false, message: 'Invalid access token: no claim rule of this service maps its groups or email to an account' };
    const account = await this.account(subject.accountId, now);
    if (!account) return { ok: false, message: this.rules ? 'Invalid access token: the account its claims map to does not exist' : 'Invalid access token: its subject is not an account of this service' };
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : 'unknown';
    const tools = payload.tools;
    // A tool allowlist that cannot be read must not read as "every tool".
    if (tools !== undefined && !Array.isArray(tools)) return { ok: false, message: "Invalid access token: the 'tools' claim must be an array of tool ids" };
    return {
      ok: true,
      principal: {
        // One rate window per client of an account, however often its tokens are refreshed.
        keyId: `oauth:${clientId}:${account.id}`,
        keyType: 'oauth',
        accountId: account.id,
        tier: account.tier,
        limits: accountLimits(account),
        scopes: subject.scopes ? new Set([...scopesOf(payload.scope)].filter((scope) => subject.scopes!.includes(scope))) : scopesOf(payload.scope),
        toolIds: Array.isArray(tools) ? new Set(tools.filter((tool): tool is string => typeof tool === 'string')) : null,
        expiresAt: new Date(payload.exp! * 1000),
        revokedAt: null,
      },
    };
  }

  /**
   * The account a token acts for: its `sub`, or with OAUTH_SUBJECT=claims the account of the first
   * claim rule it matches, its scopes then bounded by that rule's role too.
   */
  private subjectOf(payload: Jose.JWTPayload): { accountId: string; scopes?: readonly Scope[] } | null {
    if (!this.rules) return { accountId: payload.sub! };
    const match = matchClaimRules(this.rules, payload, this.config.OIDC_GROUPS_CLAIM);
    return match && { accountId: match.accountId, scopes: match.scopes };
  }

  private loadJose(): Promise<typeof Jose> {
    return (this.jose ??= importEsm<typeof Jose>('jose'));
  }

  private keys(): Promise<Jose.JWTVerifyGetKey> {
    this.keySet ??= this.createKeySet().catch((err: unknown) => {
      this.keySet = undefined; // the next token tries the issuer again
      throw err;
    });
    return this.keySet;
  }

  private async createKeySet(): Promise<Jose.JWTVerifyGetKey> {
    const jose = await this.loadJose();
    const jwksUrl = this.config.OAUTH_JWKS_URL ?? (await this.discoverJwksUrl());
    return jose.createRemoteJWKSet(new URL(jwksUrl), {
      cacheMaxAge: JWKS_MAX_AGE_MS,
      cooldownDuration: JWKS_COOLDOWN_MS,
      [jose.customFetch]: (url: string, options: RequestInit) => this.fetch(url, options) as Promise<Response>,
    });
  }

  /** RFC 8414 metadata first, then OpenID discovery: both name the issuer's `jwks_uri`. */
  private async discoverJwksUrl(): Promise<string> {
    const issuer = this.config.OAUTH_ISSUER!.replace(/\/+$/, '');
    const { origin, pathname } = new URL(issuer);
    const candidates = [`${origin}/.well-known/oauth-authorization-server${pathname === '/' ? '' : pathname}`, `${issuer}/.well-known/openid-configuration`];
    for (const url of candidates) {
      const response = await this.fetch(url, { signal: AbortSignal.timeout(ISSUER_METADATA_TIMEOUT_MS), redirect: 'error' }).catch(() => null);
      if (!response?.ok) continue;
      const metadata = (await response.json().catch(() => null)) as { issuer?: unknown; jwks_uri?: unknown } | null;
      // RFC 8414 §3.3: metadata naming another issuer must not be used.
      if (metadata && typeof metadata.jwks_uri === 'string' && String(metadata.issuer).replace(/\/+$/, '') === issuer) return metadata.jwks_uri;
    }
    throw new Error(`The authorization server ${issuer} publishes no usable metadata (jwks_uri)`);
  }

  /** Outbound requests to the issuer go through the egress policy, like every call the service makes. */
  private fetch(url: string, init: RequestInit) {
    const dispatcher = this.egresses.for(egressSettingsOf(this.config)).dispatcher;
    return undiciFetch(url, { ...(init as object), dispatcher });
  }

  private async account(id: string, now: number): Promise<Account | null> {
    const cached = this.accounts.get(id);
    if (cached && cached.until > now) return cached.account;
    const account = await this.accountRepository.findOne({ where: { id } });
    if (this.cacheTtlMs > 0) {
      if (this.accounts.size >= ACCOUNT_CACHE_MAX) this.accounts.clear();
      this.accounts.set(id, { account, until: now + this.cacheTtlMs });
    }
    return account;
  }
}

function scopesOf(claim: unknown): ReadonlySet<Scope> {
  if (typeof claim !== 'string') return new Set();
  const known: ReadonlySet<string> = new Set(SCOPES);
  return new Set(claim.split(' ').filter((scope): scope is Scope => known.has(scope)));
}

/** What the client is told: why the token was refused, never the token or the key material. */
function refusalOf(err: Error, jose: typeof Jose, audience: string): string {
  const { errors } = jose;
  if (err instanceof errors.JWTExpired) return 'Invalid access token: it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return `Invalid access token: it is not for this resource (${audience})`;
    if (err.claim === 'nbf') return 'Invalid access token: it is not valid yet';
    if (err.claim === 'iss') return 'Invalid access token: it was not issued by this service\'s authorization server';
    if (err.claim === 'typ') return 'Invalid access token: not an access token (typ must be at+jwt)';
    return `Invalid access token: the '${err.claim}' claim is missing or wrong`;
  }
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed) return 'Invalid access token: its signature does not verify';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError)) throw issuerUnavailable(err);
  if (err instanceof errors.JOSEAlgNotAllowed) return 'Invalid access token: its signing algorithm is not accepted';
  return 'Invalid access token: it is not a well-formed signed JWT';
}

/** The issuer's keys could not be read: the token may be fine, so the client is told to retry, not that it is bad. */
function issuerUnavailable(err: unknown): AppException {
  return new AppException('INTERNAL_ERROR', `The authorization server's signing keys cannot be read just now: ${(err as Error).message}`, { status: 503, retryable: true, retry_after: 5 });
}
