import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { freePort } from './free-port';
import { until } from './poll';

const EVERYTHING = path.join(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** The official reference MCP server (`@modelcontextprotocol/server-everything`) over Streamable HTTP. */
export interface EverythingServer {
  url: string;
  port: number;
  child: ChildProcess;
}

/** The reference server on 127.0.0.1 (a free port unless given), ready once it says it listens. */
export async function startEverything(port?: number): Promise<EverythingServer> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await until('server-everything listening', async () => (said.includes('listening on port') ? true : undefined), 20_000);
  return { url: `http://127.0.0.1:${port}/mcp`, port, child };
}

/** The reference server for the enclosing describe block: started before its tests, killed after. */
export function useEverything(): { readonly server: EverythingServer } {
  const holder = {} as { server: EverythingServer };
  beforeAll(async () => {
    holder.server = await startEverything();
  });
  afterAll(() => {
    holder.server?.child.kill();
  });
  return holder;
}
