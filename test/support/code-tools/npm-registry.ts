/**
 * A loopback npm registry answering the version-manifest endpoint the npm CLI and registry
 * clients use: `GET /<name>/<version>` (scoped names as `@scope%2Fname`) → the package.json
 * published for that version, 404 `{"error":"Not found"}` otherwise. Tests can fail or stall it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

export const FIXTURE_REGISTRY_FILE = path.resolve(__dirname, '../../../tools/security/fixtures/registry/manifests.json');

export interface NpmRegistryFake {
  url: string;
  requests: Array<{ path: string; authorization?: string }>;
  failWith?: number;
  stall?: Promise<void>;
  close(): Promise<void>;
}

export async function startNpmRegistryFake(manifestsFile = FIXTURE_REGISTRY_FILE, host = '127.0.0.1'): Promise<NpmRegistryFake> {
  const manifests = JSON.parse(readFileSync(manifestsFile, 'utf8')) as Record<string, Record<string, unknown>>;
  const fake: NpmRegistryFake = {
    url: '',
    requests: [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer(async (req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://registry').pathname;
    fake.requests.push({ path: pathname, authorization: req.headers.authorization });
    if (fake.stall) await fake.stall;
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (fake.failWith) return send(fake.failWith, { error: 'registry unavailable' });
    const match = /^\/((?:@[^/]+%2[Ff])?[^/@]+)\/([^/]+)$/.exec(pathname);
    const manifest = match && manifests[decodeURIComponent(match[1])]?.[decodeURIComponent(match[2])];
    if (req.method !== 'GET' || !manifest) return send(404, { error: 'Not found' });
    send(200, manifest);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  fake.url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return fake;
}
