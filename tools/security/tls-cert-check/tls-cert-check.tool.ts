import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { isWeakKey, matchesName, summarize, summarizeLeaf, type CertificateSummary, type LeafSummary } from './certificate-summary';

const FLAGS = ['expired', 'not_yet_valid', 'expires_soon', 'self_signed', 'untrusted', 'name_mismatch', 'weak_key'] as const;
type Flag = (typeof FLAGS)[number];

/** Certificates above the leaf that are reported; real chains have 1-3. */
const MAX_CHAIN = 10;

type TlsCertCheckInput = ToolInput<typeof definition>;

type TlsCertCheckOutput = ToolOutput<typeof definition>;

const SUMMARY_PROPERTIES = {
  subject: { type: 'string' },
  issuer: { type: 'string' },
  valid_to: { type: 'string' },
  days_left: { type: 'integer' },
  key_type: { type: 'string' },
  key_bits: { type: ['integer', 'null'] },
  self_signed: { type: 'boolean' },
  is_ca: { type: 'boolean' },
} as const;

const definition = defineTool({
  id: 'tls-cert-check',
  name: 'TLS Certificate Check',
  category: 'security',
  description:
    "Connects to host:port with TLS (SNI) and reports the certificate the server presents: subject, SANs, issuer, validity and days left, key, fingerprint, the chain up to the trusted root, whether the chain is trusted and the name matches, the negotiated protocol and cipher, and flags (expired, not_yet_valid, expires_soon, self_signed, untrusted, name_mismatch, weak_key). A bad certificate is a result (valid: false), not an error.",
  version: '1.0.0',
  cacheable: true,
  cache_ttl: 300,
  effects: 'read',
  open_world: true,
  timeout: 30,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9._:\\[\\]-]+$', description: 'Host name or IP address of the TLS server.' },
      port: { type: 'integer', minimum: 1, maximum: 65_535, default: 443, description: 'TCP port.' },
      servername: {
        type: 'string',
        maxLength: 253,
        pattern: '^[A-Za-z0-9._*-]+$',
        description: 'Name sent as SNI and checked against the certificate; the host when omitted (none is sent for an IP address, which is then checked against the IP SANs).',
      },
      warn_days: { type: 'integer', minimum: 0, maximum: 365, default: 30, description: 'Flag expires_soon when fewer days than this are left.' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 30_000, default: 10_000, description: 'Time allowed for connect and handshake.' },
    },
    required: ['host'],
  },
  output: {
    type: 'object',
    properties: {
      host: { type: 'string', description: 'The host connected to.' },
      port: { type: 'integer', description: 'The port connected to.' },
      servername: { type: 'string', description: 'The name checked (and sent as SNI unless an IP address).' },
      valid: { type: 'boolean', description: 'True when the chain is trusted, the name matches, the certificate is within its validity and its key is not weak.' },
      flags: { type: 'array', items: { type: 'string', enum: [...FLAGS] }, description: `Problems found, in this order: ${FLAGS.join(', ')}.` },
      days_left: { type: 'integer', description: "Whole days until the leaf certificate's notAfter (negative once expired)." },
      name_matches: { type: 'boolean', description: 'Whether the leaf is valid for servername (SANs, wildcards per RFC 6125).' },
      trusted: { type: 'boolean', description: "Whether the chain verifies against the service's trusted roots (public roots plus EGRESS_CA_FILE), name aside." },
      trust_error: { type: ['string', 'null'], description: "OpenSSL's reason when not trusted (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE, …)." },
      protocol: { type: ['string', 'null'], description: 'Negotiated protocol (TLSv1.2, TLSv1.3).' },
      cipher: { type: ['string', 'null'], description: 'Negotiated cipher suite (IANA name).' },
      certificate: {
        type: 'object',
        description: 'The leaf: subject and issuer DNs, validity (ISO 8601), days_left, key_type/key_bits, self_signed, is_ca, dns_names, ip_addresses, serial_number and fingerprint_sha256 (lower-case hex).',
        properties: {
          ...SUMMARY_PROPERTIES,
          valid_from: { type: 'string' },
          dns_names: { type: 'array', items: { type: 'string' } },
          ip_addresses: { type: 'array', items: { type: 'string' } },
          serial_number: { type: 'string' },
          fingerprint_sha256: { type: 'string' },
        },
      },
      chain: {
        type: 'array',
        maxItems: MAX_CHAIN,
        description: 'The certificates above the leaf, issuer first, up to the root when the chain is trusted; same members as the leaf without valid_from, names, serial and fingerprint.',
        items: { type: 'object', properties: SUMMARY_PROPERTIES },
      },
    },
    required: ['host', 'port', 'servername', 'valid', 'flags', 'days_left', 'name_matches', 'trusted', 'trust_error', 'protocol', 'cipher', 'certificate', 'chain'],
  },
  examples: [
    {
      name: 'A certificate from a trusted CA',
      input: { host: 'secure.example.test', port: 9043 },
      output: {
        host: 'secure.example.test',
        port: 9043,
        servername: 'secure.example.test',
        valid: true,
        flags: [],
        days_left: 59,
        name_matches: true,
        trusted: true,
        trust_error: null,
        protocol: 'TLSv1.3',
        cipher: 'TLS_AES_256_GCM_SHA384',
        certificate: {
          subject: 'CN=secure.example.test',
          issuer: 'CN=Example World Test CA',
          valid_from: '2026-11-22T18:41:00.000Z',
          valid_to: '2027-01-21T18:41:00.000Z',
          days_left: 59,
          key_type: 'ec',
          key_bits: 256,
          self_signed: false,
          is_ca: false,
          dns_names: ['secure.example.test'],
          ip_addresses: ['127.84.23.9'],
          serial_number: '03ea',
          fingerprint_sha256: '9f2c4e0d5b7a8c1e3f6d2b4a6c8e0f1a3b5d7c9e1f2a4b6c8d0e2f4a6b8c0d1e',
        },
        chain: [
          {
            subject: 'CN=Example World Test CA',
            issuer: 'CN=Example World Test CA',
            valid_to: '2026-11-24T18:40:59.000Z',
            days_left: 1,
            key_type: 'ec',
            key_bits: 256,
            self_signed: true,
            is_ca: true,
          },
        ],
      },
      varies: ['certificate.valid_from', 'certificate.valid_to', 'certificate.ip_addresses', 'certificate.serial_number', 'certificate.fingerprint_sha256', 'chain.0.valid_to'],
    },
  ],
});

@Tool(definition)
export class TlsCertCheckTool implements ToolHandler<typeof definition> {
  async execute(input: TlsCertCheckInput, ctx: ToolContext<typeof definition>): Promise<TlsCertCheckOutput> {
    const host = input.host.replace(/^\[(.*)\]$/, '$1');
    const servername = input.servername ?? host;
    const socket = (await ctx.net
      .connect({
        host,
        port: input.port,
        // Verification is reported, not enforced: a bad certificate is what the caller asks about.
        // The name is checked apart (matchesName), so `authorized` is about the chain alone.
        tls: { rejectUnauthorized: false, checkServerIdentity: () => undefined, ...(isIP(servername) ? {} : { servername }) },
        timeoutMs: input.timeout_ms,
        parameter: 'host',
      })
      .catch((err: unknown) => {
        throw handshakeRefused(err) ?? err;
      })) as TLSSocket;
    try {
      const peer = socket.getPeerCertificate(true);
      if (!peer?.raw) throw new ToolError(`${host}:${input.port} presented no certificate`, { details: { target: `${host}:${input.port}` } });
      const now = Date.now();
      const [leafRaw, ...above] = chainOf(peer);
      const leaf = new X509Certificate(leafRaw);
      const certificate = summarizeLeaf(leaf, now);
      const nameMatches = matchesName(leaf, servername);
      const trustError = socket.authorized ? null : String(socket.authorizationError ?? 'UNKNOWN');
      const flags = flagsOf(certificate, { nameMatches, trusted: socket.authorized, warnDays: input.warn_days, now });
      const cipher = socket.getCipher();
      return {
        host,
        port: input.port,
        servername,
        valid: !flags.some((flag) => flag !== 'expires_soon'),
        flags,
        days_left: certificate.days_left,
        name_matches: nameMatches,
        trusted: socket.authorized,
        trust_error: trustError,
        protocol: socket.getProtocol() ?? null,
        cipher: cipher?.standardName ?? cipher?.name ?? null,
        certificate,
        chain: above.map((raw) => summarize(new X509Certificate(raw), now)),
      };
    } finally {
      socket.destroy();
    }
  }
}

/** DER of the leaf and each issuer node returns, stopping at the self-issued root (which links to itself). */
function chainOf(peer: DetailedPeerCertificate): Buffer[] {
  const chain = [peer.raw];
  for (let current = peer; chain.length <= MAX_CHAIN; ) {
    const issuer = current.issuerCertificate;
    if (!issuer?.raw || issuer === current || issuer.raw.equals(current.raw)) break;
    chain.push(issuer.raw);
    current = issuer;
  }
  return chain;
}

/**
 * A TLS-level failure (the port speaks no TLS, no protocol or cipher in common) is not cured by
 * retrying, unlike the network failures ctx.net reports as retryable; null for anything else.
 */
function handshakeRefused(err: unknown): ToolError | null {
  if (!(err instanceof ToolError)) return null;
  const code = err.details?.error;
  if (typeof code !== 'string' || !code.startsWith('ERR_SSL_')) return null;
  return new ToolError(`${String(err.details?.target)} did not complete a TLS handshake (${code})`, {
    details: err.details,
    suggestion: 'Check that the port serves TLS (not plain text or STARTTLS) and supports TLS 1.2 or later',
  });
}

function flagsOf(leaf: LeafSummary, facts: { nameMatches: boolean; trusted: boolean; warnDays: number; now: number }): Flag[] {
  const found: Record<Flag, boolean> = {
    expired: Date.parse(leaf.valid_to) < facts.now,
    not_yet_valid: Date.parse(leaf.valid_from) > facts.now,
    expires_soon: Date.parse(leaf.valid_to) >= facts.now && leaf.days_left < facts.warnDays,
    self_signed: leaf.self_signed,
    untrusted: !facts.trusted,
    name_mismatch: !facts.nameMatches,
    weak_key: isWeakKey(leaf),
  };
  return FLAGS.filter((flag) => found[flag]);
}
