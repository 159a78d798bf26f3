/**
 * Certificates for TLS tests, made with @peculiar/x509 on node's WebCrypto: a test CA and leaves
 * with any validity window, names and key (expired, not yet valid, wrong host, self-signed, weak).
 */
import 'reflect-metadata'; // @peculiar/x509's tsyringe needs it loaded first
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
// Node's webcrypto is the WebCrypto the library expects (the DOM's Crypto type is not in this project's lib).
x509.cryptoProvider.set(webcrypto as never);

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const rsa = (bits: number) => ({ name: 'RSASSA-PKCS1-v1_5', modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }) as const;
export const DAY_MS = 86_400_000;

export interface KeyedCertificate {
  /** PEM of the certificate. */
  cert: string;
  /** PEM (PKCS#8) of its private key. */
  key: string;
  /** What signs certificates it issues. */
  signer: { name: string; privateKey: CryptoKey; algorithm: typeof EC_P256 | ReturnType<typeof rsa> };
}

export interface CertificateOptions {
  /** Common name; also the first DNS name. */
  name: string;
  /** More DNS names (subjectAltName). */
  dnsNames?: string[];
  ipAddresses?: string[];
  notBefore?: Date;
  notAfter?: Date;
  /** An RSA key of this size instead of EC P-256. */
  rsaBits?: number;
  /** Signed by this CA; self-signed when omitted. */
  issuer?: KeyedCertificate;
  isCa?: boolean;
  serialNumber?: string;
}

let serial = 1;

export async function makeCertificate(options: CertificateOptions): Promise<KeyedCertificate> {
  const algorithm = options.rsaBits ? rsa(options.rsaBits) : EC_P256;
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const subject = `CN=${options.name}`;
  const signer = options.issuer?.signer ?? { name: subject, privateKey: keys.privateKey, algorithm };
  const names = [...(options.isCa ? [] : [options.name, ...(options.dnsNames ?? [])]).map((value) => ({ type: 'dns' as const, value })), ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: options.serialNumber ?? (serial++).toString(16).padStart(4, '0'),
    subject,
    issuer: signer.name,
    notBefore: options.notBefore ?? new Date(Date.now() - DAY_MS),
    notAfter: options.notAfter ?? new Date(Date.now() + 90 * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: signer.algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(Boolean(options.isCa), undefined, true),
      new x509.KeyUsagesExtension(options.isCa ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      ...(options.isCa ? [] : [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    cert: `${certificate.toString('pem')}\n`,
    key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    signer: { name: subject, privateKey: keys.privateKey, algorithm },
  };
}
