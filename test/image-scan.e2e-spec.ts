/**
 * image-scan through the service with a reported image bomb: a small
 * workspace holding a `docker save` archive whose gzip layer inflates 60 package.json files of
 * 15 MiB each. Five concurrent calls each end INVALID_INPUT naming the read budget, and the
 * service answers other requests while they run and after.
 */
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { FIXTURE_OSV_DIR } from './support/code-tools/workspace';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { packageJsonBomb } from './support/docker/image-bomb';

async function workspaceArchive(files: Record<string, Buffer>): Promise<Buffer> {
  const archive = pack();
  for (const [name, body] of Object.entries(files)) archive.entry({ name, size: body.length }, body);
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks), { level: 9 });
}

describe('image-scan through the service, given an image bomb', () => {
  const suite = useTestApp(DATABASE_MODES[0], { env: { OSV_DATA_DIR: FIXTURE_OSV_DIR } });

  it('refuses five concurrent bomb scans with INVALID_INPUT naming the limit, and the service keeps answering', async () => {
    const upload = await suite.t.request({ method: 'POST', url: '/v1/workspaces', key: suite.acme.key, headers: { 'content-type': 'application/gzip' }, payload: await workspaceArchive({ 'bomb.tar': await packageJsonBomb() }) });
    expect(upload.statusCode).toBe(201);
    // What the reporter saw: a workspace of a few KB.
    expect(upload.json().archive_bytes).toBeLessThan(64 * 1024);
    const workspace = upload.json().id as string;

    let scanning = true;
    const answered: number[] = [];
    const scans = Promise.all(
      Array.from({ length: 5 }, () => suite.t.request({ method: 'POST', url: '/v1/tools/image-scan/invoke', key: suite.acme.key, payload: { inputs: { workspace, tarball: 'bomb.tar' } } })),
    ).finally(() => (scanning = false));
    // Meanwhile another caller's requests are answered.
    while (scanning) {
      const started = Date.now();
      const health = await suite.t.request({ method: 'GET', url: '/v1/tools/image-scan', key: suite.acme.key });
      expect(health.statusCode).toBe(200);
      answered.push(Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const res of await scans) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'tarball' } });
      expect(res.json().error.message).toMatch(/IMAGE_SCAN_MAX_READ_BYTES/);
    }
    expect(answered.length).toBeGreaterThan(0);
    expect(Math.max(...answered)).toBeLessThan(2_000);
    expect((await suite.t.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
  }, 120_000);
});
