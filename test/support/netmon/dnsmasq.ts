/** Throwaway dnsmasq resolvers (Debian dnsmasq-base) answering only the records a test gives them. */
import { promises as dnsPromises } from 'node:dns';
import { findDnsmasq } from '../example-world/world';
import { freePort } from '../free-port';
import { startDaemon, type Daemon } from './daemon';

export interface Dnsmasq extends Daemon {
  /** `127.0.0.1:<port>`, what a dns-lookup `server` input names. */
  server: string;
}

/**
 * dnsmasq on a free loopback port: no upstream, no /etc/hosts, only `records` (dnsmasq options
 * such as `--host-record=…`, `--mx-host=…`, `--server=…`).
 */
export async function startDnsmasq(records: readonly string[]): Promise<Dnsmasq> {
  const binary = findDnsmasq();
  if (!binary) throw new Error('dnsmasq not found (apt-get install dnsmasq-base)');
  const port = await freePort();
  const server = `127.0.0.1:${port}`;
  const resolver = new dnsPromises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([server]);
  const daemon = await startDaemon({
    name: 'dnsmasq',
    binary,
    args: () => ['--no-daemon', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--no-poll', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--log-facility=-', ...records],
    // Any answer (even REFUSED) means it listens; a timeout or ECONNREFUSED means not yet.
    ready: () =>
      resolver.resolve4('probe.invalid').then(
        () => true,
        (err: NodeJS.ErrnoException) => err.code !== 'ETIMEOUT' && err.code !== 'ECONNREFUSED',
      ),
  });
  return { ...daemon, server };
}

/** The RDATA of a DNS name in wire form (uncompressed labels), hex, for `--dns-rr`. */
export function wireName(name: string): string {
  const labels = name.replace(/\.$/, '').split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')]));
  return Buffer.concat([...labels, Buffer.from([0])]).toString('hex');
}

/** The RDATA of a CAA record (RFC 8659: flags, tag length, tag, value), hex, for `--dns-rr=<name>,257,<hex>`. */
export function caaRdata(flags: number, tag: string, value: string): string {
  return Buffer.concat([Buffer.from([flags, tag.length]), Buffer.from(tag, 'ascii'), Buffer.from(value, 'utf8')]).toString('hex');
}
