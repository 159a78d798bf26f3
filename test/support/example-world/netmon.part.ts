/**
 * The network and monitoring tools' examples: DNS records under example.test for dns-lookup.
 */
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

export const part: WorldPart = {
  name: 'netmon',
  async start() {
    return { dnsmasqArgs: DNS_RECORDS, stop: async () => undefined };
  },
};
