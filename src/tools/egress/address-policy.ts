import { BlockList, isIP } from 'node:net';

/** Ranges no outbound call may reach unless EGRESS_ALLOW opens them (docs/configuration.md). */
const REFUSED_V4: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'reserved (IETF)'],
  ['192.0.2.0', 24, 'reserved (documentation)'],
  ['192.88.99.0', 24, 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'reserved (documentation)'],
  ['203.0.113.0', 24, 'reserved (documentation)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const REFUSED_V6: readonly [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved (discard)'],
  ['2001:db8::', 32, 'reserved (documentation)'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const refusedV4 = REFUSED_V4.map(([net, prefix, label]) => ({ list: blockOf(net, prefix, 'ipv4'), label }));
const refusedV6 = REFUSED_V6.map(([net, prefix, label]) => ({ list: blockOf(net, prefix, 'ipv6'), label }));

/** All refused ranges of a family in one list: a public address (the usual case) costs one check. */
const anyRefusedV4 = new BlockList();
REFUSED_V4.forEach(([net, prefix]) => anyRefusedV4.addSubnet(net, prefix, 'ipv4'));
const anyRefusedV6 = new BlockList();
REFUSED_V6.forEach(([net, prefix]) => anyRefusedV6.addSubnet(net, prefix, 'ipv6'));

function blockOf(net: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return list;
}

/**
 * Why an IP address is refused (its class, e.g. "loopback"), or null when it is public.
 * IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d,
 * NAT64 64:ff9b::a.b.c.d) are judged by that IPv4 address.
 */
export function refusedClass(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return anyRefusedV4.check(address, 'ipv4') ? refusedV4.find(({ list }) => list.check(address, 'ipv4'))!.label : null;
  if (family !== 6) return 'not an IP address';
  const embedded = embeddedIPv4(address);
  if (embedded) return refusedClass(embedded);
  return anyRefusedV6.check(address, 'ipv6') ? refusedV6.find(({ list }) => list.check(address, 'ipv6'))!.label : null;
}

/** The IPv4 address an IPv4-mapped, -compatible or NAT64 IPv6 address carries, if any. */
export function embeddedIPv4(address: string): string | null {
  const words = ipv6Words(address);
  if (!words) return null;
  const zeroPrefix = words.slice(0, 5).every((w) => w === 0);
  const mapped = zeroPrefix && words[5] === 0xffff;
  const compatible = zeroPrefix && words[5] === 0 && (words[6] !== 0 || words[7] > 1);
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  if (!mapped && !compatible && !nat64) return null;
  return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address, or null when it is not one. */
function ipv6Words(address: string): number[] | null {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = dotted[1].split('.').map(Number);
    text = text.slice(0, dotted.index) + `${((bytes[0] << 8) | bytes[1]).toString(16)}:${((bytes[2] << 8) | bytes[3]).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headWords = head ? head.split(':') : [];
  const tailWords = tail === undefined ? [] : tail ? tail.split(':') : [];
  const missing = 8 - headWords.length - tailWords.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  const words = [...headWords, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailWords].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** EGRESS_ALLOW parsed: exact hosts, `*.suffix` patterns and CIDRs that open exceptions. */
export class EgressPolicy {
  private readonly hosts = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly networks = new BlockList();

  constructor(readonly allow: string = '') {
    for (const raw of allow.split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean)) {
      const cidr = /^(.+)\/(\d{1,3})$/.exec(raw);
      if (cidr && isIP(cidr[1])) {
        const family = isIP(cidr[1]) === 4 ? 'ipv4' : 'ipv6';
        this.networks.addSubnet(cidr[1], Number(cidr[2]), family);
      } else if (isIP(unbracket(raw))) {
        const address = unbracket(raw);
        this.networks.addAddress(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
      } else if (raw.startsWith('*.')) {
        this.suffixes.push(raw.slice(1));
      } else if (/^[a-z0-9.-]+$/.test(raw)) {
        this.hosts.add(raw.replace(/\.$/, ''));
      } else {
        throw new Error(`EGRESS_ALLOW: '${raw}' is not a host, a *.suffix pattern or a CIDR`);
      }
    }
  }

  /** True when the operator opened this host name by name or pattern. */
  hostAllowed(host: string): boolean {
    const name = unbracket(host).toLowerCase().replace(/\.$/, '');
    return this.hosts.has(name) || this.suffixes.some((suffix) => name.endsWith(suffix));
  }

  /** Why connecting to `address` (reached through `host`) is refused, or null when it may. */
  refusal(host: string, address: string): string | null {
    if (this.hostAllowed(host)) return null;
    const family = isIP(address);
    if (family && this.networks.check(address, family === 4 ? 'ipv4' : 'ipv6')) return null;
    const embedded = family === 6 ? embeddedIPv4(address) : null;
    if (embedded && this.networks.check(embedded, 'ipv4')) return null;
    return refusedClass(address);
  }
}

export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
