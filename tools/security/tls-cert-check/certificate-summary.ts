/** What tls-cert-check reports about one X.509 certificate, read with node:crypto. */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

const DAY_MS = 86_400_000;
/** Below these sizes a key is weak (NIST SP 800-131A: RSA/DSA 2048, EC 224; we ask 256 of EC). */
const MIN_RSA_BITS = 2048;
const MIN_EC_BITS = 256;
/** Field sizes of the named curves OpenSSL reports. */
const CURVE_BITS: Record<string, number> = { prime192v1: 192, secp224r1: 224, prime256v1: 256, secp256k1: 256, secp384r1: 384, secp521r1: 521, brainpoolP256r1: 256, brainpoolP384r1: 384, brainpoolP512r1: 512 };
const EDWARDS_BITS: Record<string, number> = { ed25519: 256, ed448: 456 };

export type CertificateSummary = {
  subject: string;
  issuer: string;
  valid_to: string;
  days_left: number;
  key_type: string;
  key_bits: number | null;
  self_signed: boolean;
  is_ca: boolean;
};

export type LeafSummary = CertificateSummary & {
  valid_from: string;
  dns_names: string[];
  ip_addresses: string[];
  serial_number: string;
  fingerprint_sha256: string;
};

export function summarize(certificate: X509Certificate, now: number): CertificateSummary {
  const { type, bits } = keyOf(certificate);
  const validTo = Date.parse(certificate.validTo);
  return {
    subject: distinguishedName(certificate.subject),
    issuer: distinguishedName(certificate.issuer),
    valid_to: new Date(validTo).toISOString(),
    days_left: Math.floor((validTo - now) / DAY_MS),
    key_type: type,
    key_bits: bits,
    self_signed: isSelfSigned(certificate),
    is_ca: certificate.ca,
  };
}

export function summarizeLeaf(certificate: X509Certificate, now: number): LeafSummary {
  const names = subjectAltNames(certificate);
  return {
    ...summarize(certificate, now),
    valid_from: new Date(certificate.validFrom).toISOString(),
    dns_names: names.filter(([kind]) => kind === 'DNS').map(([, value]) => value),
    ip_addresses: names.filter(([kind]) => kind === 'IP Address').map(([, value]) => value),
    serial_number: certificate.serialNumber.toLowerCase(),
    fingerprint_sha256: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
}

/** Whether the certificate is valid for `name` (a host name, wildcards per RFC 6125, or an IP address). */
export function matchesName(certificate: X509Certificate, name: string): boolean {
  return isIP(name) ? certificate.checkIP(name) !== undefined : certificate.checkHost(name) !== undefined;
}

export function isWeakKey(summary: Pick<CertificateSummary, 'key_type' | 'key_bits'>): boolean {
  if (summary.key_bits === null) return true;
  if (summary.key_type === 'rsa' || summary.key_type === 'rsa-pss' || summary.key_type === 'dsa') return summary.key_bits < MIN_RSA_BITS;
  if (summary.key_type === 'ec') return summary.key_bits < MIN_EC_BITS;
  return false;
}

function keyOf(certificate: X509Certificate): { type: string; bits: number | null } {
  const key = certificate.publicKey;
  const type = key.asymmetricKeyType ?? 'unknown';
  const details = key.asymmetricKeyDetails ?? {};
  if (details.modulusLength) return { type, bits: details.modulusLength };
  if (details.namedCurve) return { type, bits: CURVE_BITS[details.namedCurve] ?? null };
  return { type, bits: EDWARDS_BITS[type] ?? null };
}

/** Issued by itself and signed with its own key (checkIssued would also ask for keyCertSign, which self-signed leaves lack). */
function isSelfSigned(certificate: X509Certificate): boolean {
  return certificate.subject === certificate.issuer && certificate.verify(certificate.publicKey);
}

/** `CN=a\nO=b` (node's form) as the one-line `CN=a, O=b`. */
function distinguishedName(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}

/** `DNS:a, IP Address:1.2.3.4` as [kind, value] pairs (node quotes values holding commas). */
function subjectAltNames(certificate: X509Certificate): [string, string][] {
  const raw = certificate.subjectAltName;
  if (!raw) return [];
  const entries = raw.match(/(?:[^,"]|"(?:[^"\\]|\\.)*")+/g) ?? [];
  return entries.map((entry) => {
    const trimmed = entry.trim();
    const colon = trimmed.indexOf(':');
    const value = trimmed.slice(colon + 1);
    return [trimmed.slice(0, colon), value.startsWith('"') ? (JSON.parse(value) as string) : value];
  });
}
