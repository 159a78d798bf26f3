/**
 * The network and monitoring tools' examples: DNS records under example.test (dns-lookup) and
 * `secure.example.test:9043`, a TLS server with a leaf of the world's CA (tls-cert-check).
 */
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { caaRdata } from '../netmon/dnsmasq';
import type { WorldPart } from './world';

/** Records the dns-lookup examples read (fixed addresses: --host-record wins over the world's catch-all). */
const DNS_RECORDS = [
  '--mx-host=example.test,mail.example.test,10',
  '--txt-record=example.test,v=spf1 mx -all',
  `--dns-rr=example.test,257,${caaRdata(0, 'issue', 'ca.example.test')}`,
  '--host-record=web.example.test,127.0.0.80,::1',
  '--cname=www.example.test,web.example.test',
  '--srv-host=_https._tcp.example.test,web.example.test,8443,10,5',
  // NXDOMAIN: a more specific --address without an address.
  '--address=/missing.example.test/',
];

/** Ports on the world address (this family's range is 9000-9099). */
export const NETMON_PORTS = { tls: 9043 } as const;

function listen(server: TlsServer, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
}

export const part: WorldPart = {
  name: 'netmon',
  async start(world) {
    // 60 days: the example's days_left (59) holds for the whole run.
    const leaf = world.issueCertificate(['secure.example.test'], { days: 60 });
    const tls = createTlsServer({ cert: `${leaf.cert}${world.caCertificate}`, key: leaf.key }, (socket) => socket.end());
    await listen(tls, NETMON_PORTS.tls, world.address);
    return {
      dnsmasqArgs: DNS_RECORDS,
      stop: () => new Promise<void>((resolve) => tls.close(() => resolve())),
    };
  },
};
