/**
 * The example world: where every tool's declared examples really run in the e2e suites.
 *
 * Example inputs name hosts under `example.test` (RFC 6761 keeps that name for tests) on fixed
 * ports. One world per test run answers them: a dnsmasq resolving every `*.example.test` name to
 * one loopback address picked for the run (so two runs on one machine never share a port), a CA
 * whose leaves the parts serve, and the servers of each part (`*.part.ts` beside this file). The
 * service under test resolves and trusts them through its own settings (EGRESS_DNS_SERVERS,
 * EGRESS_CA_FILE), the way an operator points it at a split-horizon DNS and a corporate CA.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promises as dnsPromises } from 'node:dns';
import { freePort } from '../free-port';
import { certificateAuthority } from '../test-ca';

/** What a part may use while it starts. */
export interface WorldInfo {
  /** The loopback address every `*.example.test` name resolves to in this run. */
  readonly address: string;
  /** A temp directory of the run, removed at the end. */
  readonly dir: string;
  /** PEM of the world's CA (what EGRESS_CA_FILE holds). */
  readonly caCertificate: string;
  /** A leaf for these DNS names (and the world address), signed by the world's CA. */
  issueCertificate(names: readonly string[], options?: { days?: number }): { cert: string; key: string };
}

export interface StartedPart {
  /** Service settings that make this part's tools' examples run (FORGE_API_URL, …). */
  env?: Record<string, string>;
  /** Extra dnsmasq options (records a dns-lookup example reads). */
  dnsmasqArgs?: string[];
  stop(): Promise<void>;
}

export interface WorldPart {
  name: string;
  start(world: WorldInfo): Promise<StartedPart>;
}

export interface ExampleWorld {
  /** The settings the service under test needs to run every example. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export const WORLD_DOMAIN = 'example.test';

export function findDnsmasq(): string | null {
  for (const candidate of ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

/** Starts the CA, every part and the resolver; stops what started when one of them fails. */
export async function startExampleWorld(): Promise<ExampleWorld> {
  const dnsmasq = findDnsmasq();
  if (!dnsmasq) throw new Error('dnsmasq not found (apt-get install dnsmasq-base)');
  // 127.0.0.0/8 minus the addresses hosts use (127.0.0.1, 127.0.1.1, 127.0.0.53).
  const address = `127.${randomInt(64, 250)}.${randomInt(0, 256)}.${randomInt(2, 250)}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-example-world-'));
  const stops: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const ca = certificateAuthority(dir, { name: 'Example World Test CA', address });
    const info: WorldInfo = { address, dir, caCertificate: ca.certificate, issueCertificate: ca.issue };
    const env: Record<string, string> = {};
    const dnsmasqArgs: string[] = [];
    for (const part of loadParts()) {
      const started = await part.start(info).catch((err: Error) => {
        throw new Error(`example world part '${part.name}' did not start: ${err.message}`);
      });
      stops.push(started.stop);
      Object.assign(env, started.env);
      dnsmasqArgs.push(...(started.dnsmasqArgs ?? []));
    }
    const resolver = await startResolver(dnsmasq, address, dnsmasqArgs);
    stops.push(resolver.stop);
    writeFileSync(path.join(dir, 'ca.pem'), ca.certificate);
    return {
      env: {
        EGRESS_ALLOW: '127.0.0.0/8,::1',
        EGRESS_DNS_SERVERS: resolver.server,
        EGRESS_CA_FILE: path.join(dir, 'ca.pem'),
        ...env,
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function loadParts(): WorldPart[] {
  return readdirSync(__dirname)
    .filter((file) => /\.part\.ts$/.test(file))
    .sort()
    .map((file) => (require(path.join(__dirname, file)) as { part: WorldPart }).part);
}

/** dnsmasq answering `*.example.test` with the world address and nothing else (no upstream, no /etc/hosts). */
async function startResolver(binary: string, address: string, extraArgs: string[]): Promise<{ server: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--no-daemon', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--no-poll', `--port=${port}`, `--listen-address=${address}`, '--bind-interfaces',
      `--address=/${WORLD_DOMAIN}/${address}`, '--log-facility=-', ...extraArgs],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const server = `${address}:${port}`;
  const resolver = new dnsPromises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([server]);
  for (const deadline = Date.now() + 10_000; ; ) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited: ${output}`);
    const answer = await resolver.resolve4(`probe.${WORLD_DOMAIN}`).catch(() => []);
    if (answer[0] === address) return { server, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`dnsmasq on ${server} did not answer: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
