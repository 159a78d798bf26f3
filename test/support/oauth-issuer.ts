/**
 * A loopback OAuth issuer for resource-server tests: real signing keys (jose), RFC 8414 metadata
 * naming its JWKS, and access tokens (RFC 9068 `at+jwt`) minted as a test asks. Validation is the
 * service's own; nothing of it is mocked.
 */
import { createServer } from 'node:http';
import type * as Jose from 'jose';
import { importEsm } from '@tos/sdk';
import { listenHttp } from './http-listen';

export interface MintOptions {
  audience?: string | string[];
  scope?: string;
  /** The tool allowlist claim; anything, to test how a wrong one is refused. */
  tools?: unknown;
  /** Seconds from now; negative for a token already expired. */
  expiresIn?: number;
  notBefore?: number;
  issuer?: string;
  typ?: string;
  clientId?: string;
}

export interface OAuthIssuer {
  url: string;
  /** JWKS requests served so far. */
  readonly jwksFetches: number;
  mint(subject: string, options?: MintOptions): Promise<string>;
  /** A token of the same claims signed by a key the issuer does not publish. */
  mintWithUnpublishedKey(subject: string, options?: MintOptions): Promise<string>;
  /** Publishes a new signing key beside the old one and signs with it from now on (key rotation). */
  rotate(): Promise<void>;
  /** A token signed with a shared secret (HS256), which a resource server must never accept. */
  mintSymmetric(subject: string, options?: MintOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startOAuthIssuer(): Promise<OAuthIssuer> {
  const jose = await importEsm<typeof Jose>('jose');
  const published = await jose.generateKeyPair('ES256');
  const unpublished = await jose.generateKeyPair('ES256');
  const publicJwk = async (key: Jose.CryptoKey, kid: string) => ({ ...(await jose.exportJWK(key)), kid, alg: 'ES256', use: 'sig' });
  const jwks = [await publicJwk(published.publicKey, 'k1')];
  let signing = { privateKey: published.privateKey, kid: 'k1' };
  let jwksFetches = 0;
  let issuer = '';
  const server = createServer((req, res) => {
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/oauth-authorization-server') return send({ issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] });
    if (req.url === '/jwks') {
      jwksFetches++;
      return send({ keys: jwks });
    }
    res.writeHead(404).end();
  });
  const listening = await listenHttp(server);
  issuer = listening.url;

  const build = (subject: string, options: MintOptions, alg: string, kid?: string) => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new jose.SignJWT({ scope: options.scope ?? 'tools:read tools:invoke executions:read', client_id: options.clientId ?? 'test-client', ...(options.tools !== undefined && { tools: options.tools }) })
      .setProtectedHeader({ alg, typ: options.typ ?? 'at+jwt', ...(kid && { kid }) })
      .setIssuer(options.issuer ?? issuer)
      .setSubject(subject)
      .setAudience(options.audience ?? [])
      .setIssuedAt(now)
      .setJti(crypto.randomUUID())
      .setExpirationTime(now + (options.expiresIn ?? 300));
    if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
    return jwt;
  };
  return {
    url: issuer,
    get jwksFetches() {
      return jwksFetches;
    },
    mint: (subject, options = {}) => build(subject, options, 'ES256', signing.kid).sign(signing.privateKey),
    rotate: async () => {
      const next = await jose.generateKeyPair('ES256');
      const kid = `k${jwks.length + 1}`;
      jwks.push(await publicJwk(next.publicKey, kid));
      signing = { privateKey: next.privateKey, kid };
    },
    mintWithUnpublishedKey: (subject, options = {}) => build(subject, options, 'ES256', 'k1').sign(unpublished.privateKey),
    mintSymmetric: (subject, options = {}) => build(subject, options, 'HS256').sign(new TextEncoder().encode('a shared secret of thirty-two bytes!')),
    close: listening.close,
  };
}
