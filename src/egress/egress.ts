import { lookup as systemLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { Agent, buildConnector, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { EgressPolicy, unbracket } from './address-policy';

/** A refused destination; the SDK turns it into INVALID_INPUT naming the tool's parameter. */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'EGRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly label: string,
  ) {
    super(`Outbound connection to ${host}${host === address ? '' : ` (${address})`} refused: ${label} address`);
  }
}

export type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** node:dns lookup's shape; tests pass a stub answering, say, 10.0.0.1, so no packet leaves. */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export interface EgressOptions {
  allow?: string;
  lookup?: LookupFunction;
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
  private readonly baseLookup: LookupFunction;

  constructor(options: EgressOptions = {}) {
    this.policy = new EgressPolicy(options.allow ?? '');
    this.baseLookup = options.lookup ?? (systemLookup as unknown as LookupFunction);
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
      })({ keepAlive: true }),
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
    const connect = buildConnector({ ...tls, lookup: this.lookup } as buildConnector.BuildOptions);
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

const shared = new Map<string, Egress>();

/** The process's one Egress per allow list (one dispatcher per process in production). */
export function egressFor(allow: string): Egress {
  let egress = shared.get(allow);
  if (!egress) shared.set(allow, (egress = new Egress({ allow })));
  return egress;
}
