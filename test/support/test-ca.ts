/** A throwaway certificate authority for TLS tests, made with the openssl CLI. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface TestCa {
  /** PEM of the CA certificate. */
  certificate: string;
  /** A leaf for these DNS names (and `address`), signed by the CA. */
  issue(names: readonly string[], options?: { days?: number }): { cert: string; key: string };
}

/** A CA in `dir` (EC P-256: fast to make), and the leaves it signs. */
export function certificateAuthority(dir: string, options: { name?: string; address?: string } = {}): TestCa {
  const { name = 'Test CA', address = '127.0.0.1' } = options;
  const caKey = path.join(dir, 'ca.key');
  const caCert = path.join(dir, 'ca.crt');
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', caKey, '-out', caCert, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  let serial = 1;
  return {
    certificate: readFileSync(caCert, 'utf8'),
    issue(names: readonly string[], options: { days?: number } = {}) {
      const base = path.join(dir, `leaf-${serial++}`);
      const san = [...names.map((name) => `DNS:${name}`), `IP:${address}`].join(',');
      writeFileSync(`${base}.ext`, `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
      openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${names[0]}`);
      openssl('x509', '-req', '-in', `${base}.csr`, '-CA', caCert, '-CAkey', caKey, '-set_serial', String(serial + 1000), '-days', String(options.days ?? 2), '-extfile', `${base}.ext`, '-out', `${base}.crt`);
      return { cert: readFileSync(`${base}.crt`, 'utf8'), key: readFileSync(`${base}.key`, 'utf8') };
    },
  };
}

