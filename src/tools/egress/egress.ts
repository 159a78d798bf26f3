import { lookup as systemLookup, promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ConfigError, type AppConfig } from '../../config/app-config';
import { Agent, buildConnector, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { EgressRefusedError } from '../sdk/network-errors';
import { EgressPolicy, unbracket } from './address-policy';

export type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** node:dns lookup's shape; tests pass a stub answering, say, 10.0.0.1, so no packet leaves. */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** The process's outbound settings, as plain values (a worker thread builds the same Egress from them). */
export interface EgressSettings {
  /** EGRESS_ALLOW: hosts, `*.suffix` patterns and CIDRs that open exceptions. */
  allow: string;
  /** EGRESS_DNS_SERVERS: resolvers (`ip[:port]`) for outbound names instead of the system's. */
  dnsServers?: readonly string[];
  /** EGRESS_CA_FILE's PEM: certificates trusted for outbound TLS besides the public roots. */
  extraCa?: string;
}

/** The outbound settings of the configuration; an unreadable EGRESS_CA_FILE stops start-up naming it. */
export function egressSettingsOf(config: Pick<AppConfig, 'EGRESS_ALLOW' | 'EGRESS_DNS_SERVERS' | 'EGRESS_CA_FILE'>): EgressSettings {
  const dnsServers = config.EGRESS_DNS_SERVERS.split(',').map((server) => server.trim()).filter(Boolean);
  let extraCa: string | undefined;
  if (config.EGRESS_CA_FILE) {
    try {
      extraCa = readFileSync(config.EGRESS_CA_FILE, 'utf8');
    } catch (err) {
      throw new ConfigError(`EGRESS_CA_FILE ${config.EGRESS_CA_FILE} cannot be read: ${(err as Error).message}`);
    }
    if (!extraCa.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`EGRESS_CA_FILE ${config.EGRESS_CA_FILE} holds no PEM certificate`);
  }
  return { allow: config.EGRESS_ALLOW, dnsServers, extraCa };
}

export interface EgressOptions {
  allow?: string;
  lookup?: LookupFunction;
  dnsServers?: readonly string[];
  extraCa?: string;
}

export interface CertificateSeen {
  valid_to: string;
  subject?: string;
  issuer?: string;
}

/**
 * One egress policy with everything that connects under it: the lookup hook that checks every
 * resolved address at connect time (so DNS rebinding cannot pass), the undici connector that
 * also checks IP literals, the pooled dispatcher, and node:http/https agents.
 */
export class Egress {
  readonly policy: EgressPolicy;
  readonly dispatcher: Dispatcher;
  readonly agents: { http: http.Agent; https: https.Agent };
  /** Peer certificate of the latest TLS connection per origin (for TLS days left). */
  readonly certificates = new Map<string, CertificateSeen>();
  readonly proxied = Boolean(process.env.HTTPS_PROXY || process.env.https_proxy || process.env.HTTP_PROXY || process.env.http_proxy);
  /** Resolvers for outbound names (EGRESS_DNS_SERVERS); empty: the system's. */
  readonly dnsServers: readonly string[];
  /** The public roots plus EGRESS_CA_FILE's certificates; undefined: Node's defaults. */
  readonly trustedCa?: string[];
  private readonly baseLookup: LookupFunction;

  constructor(options: EgressOptions = {}) {
    this.policy = new EgressPolicy(options.allow ?? '');
    this.dnsServers = options.dnsServers ?? [];
    this.trustedCa = options.extraCa ? [...rootCertificates, options.extraCa] : undefined;
    this.baseLookup = options.lookup ?? (this.dnsServers.length > 0 ? resolverLookup(this.dnsServers) : (systemLookup as unknown as LookupFunction));
    // Behind a proxy the proxy resolves names; ctx.http checks each target before the request instead.
    this.dispatcher = this.proxied ? new EnvHttpProxyAgent({ connect: this.connector() }) : this.agent();
    const lookup = this.lookup;
    const guard = this.guardLiteral.bind(this);
    this.agents = {
      http: new (class extends http.Agent {
        override createConnection(opts: net.NetConnectOpts, cb?: (err: Error | null, socket: net.Socket) => void) {
          return guard(opts) ?? (super.createConnection as Function).call(this, { ...opts, lookup }, cb);
        }
      })({ keepAlive: true }),
      https: new (class extends https.Agent {
        override createConnection(opts: net.NetConnectOpts, cb?: (err: Error | null, socket: net.Socket) => void) {
          return guard(opts) ?? (super.createConnection as Function).call(this, { ...opts, lookup }, cb);
        }
      })({ keepAlive: true, ...(this.trustedCa && { ca: this.trustedCa }) }),
    };
  }

  /** A pooled undici Agent under the policy; `tls` adds trust for one call's own agent. */
  agent(tls: { ca?: string | string[]; rejectUnauthorized?: boolean } = {}): Agent {
    return new Agent({ connect: this.connector(tls), keepAliveTimeout: 10_000 });
  }

  /** The check `lookup` hook: resolves all addresses, refuses when any is refused, pins the first. */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    this.baseLookup(hostname, { ...options, all: true }, (err, result) => {
      if (err) return callback(err, '');
      const addresses = result as LookupAddress[];
      for (const { address } of addresses) {
        const label = this.policy.refusal(hostname, address);
        if (label) return callback(new EgressRefusedError(hostname, address, label) as NodeJS.ErrnoException, '');
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };

  /** Resolves and checks `host`; the address to connect to. */
  resolve(host: string): Promise<LookupAddress> {
    const literal = unbracket(host);
    if (net.isIP(literal)) {
      const label = this.policy.refusal(literal, literal);
      return label ? Promise.reject(new EgressRefusedError(literal, literal, label)) : Promise.resolve({ address: literal, family: net.isIP(literal) });
    }
    return new Promise((resolve, reject) =>
      this.lookup(host, {}, (err, address, family) => (err ? reject(err) : resolve({ address: address as string, family: family ?? 4 }))),
    );
  }

  /** A refusal for a connection to an IP literal (the lookup hook never sees those), else null. */
  private literalRefusal(host: string | undefined): EgressRefusedError | null {
    const literal = unbracket(host ?? 'localhost');
    if (!net.isIP(literal)) return null;
    const label = this.policy.refusal(literal, literal);
    return label ? new EgressRefusedError(literal, literal, label) : null;
  }

  private guardLiteral(opts: net.NetConnectOpts): net.Socket | null {
    const refusal = this.literalRefusal((opts as net.TcpNetConnectOpts).host);
    if (!refusal) return null;
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(refusal));
    return socket;
  }

  private connector(tls: { ca?: string | string[]; rejectUnauthorized?: boolean } = {}): buildConnector.connector {
    const ca = tls.ca === undefined ? this.trustedCa : [...(this.trustedCa ?? rootCertificates), ...[tls.ca].flat()];
    const connect = buildConnector({ ...tls, ...(ca && { ca }), lookup: this.lookup } as buildConnector.BuildOptions);
    return (opts, callback) => {
      const refusal = this.literalRefusal(opts.hostname);
      if (refusal) return callback(refusal, null);
      return connect(opts, (err, socket) => {
        if (!err && socket && 'getPeerCertificate' in socket) {
          const cert = (socket as import('node:tls').TLSSocket).getPeerCertificate();
          if (cert?.valid_to) {
            this.certificates.set(`${opts.protocol}//${opts.hostname}:${opts.port || 443}`, {
              valid_to: new Date(cert.valid_to).toISOString(),
              subject: cert.subject?.CN?.toString(),
              issuer: cert.issuer?.CN?.toString(),
            });
          }
        }
        callback(err as Error, socket as never);
      });
    };
  }
}

/**
 * node:dns lookup's shape answered by a Resolver on `servers` (A and AAAA), so outbound names
 * resolve where the operator says (a filtering resolver; the tests' own dnsmasq).
 */
function resolverLookup(servers: readonly string[]): LookupFunction {
  const resolver = new dnsPromises.Resolver({ timeout: 3000, tries: 2 });
  resolver.setServers([...servers]);
  return (hostname, options, callback) => {
    const family = net.isIP(hostname);
    if (family) return callback(null, [{ address: hostname, family }]);
    const wants = (v: 4 | 6) => !options.family || options.family === v || options.family === `IPv${v}`;
    void Promise.allSettled([wants(4) ? resolver.resolve4(hostname) : [], wants(6) ? resolver.resolve6(hostname) : []]).then(([v4, v6]) => {
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length > 0) return callback(null, addresses);
      const failed = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason?.code !== 'ENODATA');
      callback(failed?.reason ?? Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    });
  };
}

/**
 * One Egress per settings, so calls share their dispatcher's connections (one per process in
 * production); closing the pool closes every dispatcher. The service's pool is a provider closed at
 * shutdown; a worker thread and the test kit hold their own.
 */
export class EgressPool {
  private readonly egresses = new Map<string, Egress>();

  for(settings: EgressSettings): Egress {
    const key = JSON.stringify([settings.allow, settings.dnsServers ?? [], settings.extraCa ?? '']);
    let egress = this.egresses.get(key);
    if (!egress) this.egresses.set(key, (egress = new Egress(settings)));
    return egress;
  }

  /** Lets requests under way finish, then closes every dispatcher. */
  async close(): Promise<void> {
    const egresses = [...this.egresses.values()];
    this.egresses.clear();
    await Promise.all(egresses.map((egress) => egress.dispatcher.close()));
  }

  /** Nest's shutdown hook, for the service's pool (ToolsModule). */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}
