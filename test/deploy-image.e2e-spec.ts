/**
 * The repository's Dockerfile, built and run on a private Docker engine (no pulls, no
 * network for builds and containers). The base images are assembled from this machine's own node
 * (test/support/deploy/node-image.ts); the build stage's `npm ci` runs offline from this machine's
 * npm cache. The container runs with no network, a read-only root and no capabilities; it is
 * probed from inside (`docker exec`), so no packet leaves the container's own loopback.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { findDockerd, startDockerEngine, type DockerEngine } from './support/docker/docker-engine';
import { dockerCli, type DockerCli } from './support/deploy/docker-cli';
import { importNodeImages, NODE_BASE_IMAGE, NODE_BUILD_IMAGE } from './support/deploy/node-image';
import { describeWith } from './support/prerequisites';
import { until } from './support/poll';

const ROOT = path.join(__dirname, '..');
const IMAGE = 'tool-orchestration-service:test';
const MiB = 1024 * 1024;
/** What the image adds to its base (dist, production node_modules, console): measured 185 MiB. */
const APP_LAYERS_BUDGET = 300 * MiB;
/** Room for the base images (the build one carries the npm cache), the build's layers and the image: about 2.5 GiB used. */
const ENGINE_TMPFS_MIB = 6 * 1024;
/** The chart's and compose's hardening, as `docker run` flags. */
const HARDENED = ['--network', 'none', '--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];

describeWith(findDockerd(), 'docker.io docker-registry busybox-static (as root)')('The container image', () => {
  let engine: DockerEngine;
  let docker: DockerCli;
  const started: string[] = [];
  /** Runs `script` with the image's node inside container `id` and returns what it printed. */
  const nodeIn = (id: string, script: string) => docker(['exec', id, 'node', '-e', script]);

  beforeAll(async () => {
    engine = await startDockerEngine({ tmpfsMiB: ENGINE_TMPFS_MIB });
    docker = dockerCli(engine.host);
    await importNodeImages(docker, path.join(ROOT, 'package-lock.json'));
    await docker(['build', '--network', 'none', '--build-arg', `BASE_IMAGE=${NODE_BASE_IMAGE}`, '--build-arg', `BUILD_IMAGE=${NODE_BUILD_IMAGE}`, '-t', IMAGE, ROOT]);
  }, 600_000);

  afterAll(async () => {
    for (const id of started) await docker(['rm', '-f', id]).catch(() => undefined);
    await engine?.stop();
  }, 60_000);

  it('runs as a non-root user on a read-only root, turns healthy and answers /readyz', async () => {
    // The Dockerfile's check, run every 2 s instead of 30 (the classic builder has no --start-interval).
    const id = (await docker(['run', '-d', ...HARDENED, '--health-interval', '2s', IMAGE])).trim();
    started.push(id);
    const health = await until(
      'the HEALTHCHECK to pass',
      async () => {
        const status = (await docker(['inspect', '-f', '{{.State.Status}} {{.State.Health.Status}}', id])).trim();
        if (status.startsWith('exited')) throw new Error(`the container exited:\n${await docker(['logs', id])}`);
        return status === 'running healthy' ? status : undefined;
      },
      120_000,
      500,
    );
    expect(health).toBe('running healthy');
    const ready = JSON.parse(await nodeIn(id, "fetch('http://127.0.0.1:3000/readyz').then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.json() })))"));
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready', checks: { database: 'ok', queue: 'ok' } } });
    expect(JSON.parse(await nodeIn(id, "console.log(JSON.stringify([process.getuid(), process.getgid()]))"))).toEqual([1000, 1000]);
    // Its own code is not writable; /data (the volume) and /tmp are.
    const writes = JSON.parse(await nodeIn(id, "const fs = require('fs'); console.log(JSON.stringify(['/app/dist/x', '/data/x', '/tmp/x'].map((f) => { try { fs.writeFileSync(f, ''); return 'ok'; } catch (e) { return e.code; } })))"));
    expect(writes).toEqual([expect.stringMatching(/^(EROFS|EACCES)$/), 'ok', 'ok']);
  }, 180_000);

  it("runs the migration Job's command (TypeORM CLI on the built data source)", async () => {
    const output = await docker(['run', '--rm', ...HARDENED, IMAGE, 'node', 'node_modules/typeorm/cli.js', '-d', 'dist/ormconfig.js', 'migration:run']);
    expect(output).toMatch(/Migration \w+ has been executed successfully/);
  }, 120_000);

  it('holds the built service only, within its size budget', async () => {
    const inventory = JSON.parse(
      await docker([
        'run', '--rm', ...HARDENED, IMAGE, 'node', '-e',
        "const fs = require('fs'); const resolvable = (m) => { try { require.resolve(m); return true; } catch { return false; } };" +
          "const maps = fs.readdirSync('node_modules', { recursive: true }).filter((f) => f.endsWith('.js.map')).length;" +
          "console.log(JSON.stringify({ app: fs.readdirSync('.').sort(), jest: resolvable('jest'), nestTesting: resolvable('@nestjs/testing'), pg: resolvable('pg'), maps }))",
      ]),
    );
    expect(inventory).toEqual({ app: ['console', 'dist', 'node_modules', 'package.json'], jest: false, nestTesting: false, pg: true, maps: 0 });
    const size = async (image: string) => Number(await docker(['image', 'inspect', '-f', '{{.Size}}', image]));
    const [total, base] = [await size(IMAGE), await size(NODE_BASE_IMAGE)];
    console.log(`image ${IMAGE}: ${(total / MiB).toFixed(0)} MiB, of which ${((total - base) / MiB).toFixed(0)} MiB the service (base ${(base / MiB).toFixed(0)} MiB)`);
    expect(total - base).toBeLessThan(APP_LAYERS_BUDGET);
    expect(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
  }, 60_000);

  it("gives an extension package added to the image the service's own SDK as @tos/sdk", async () => {
    const script = "const fs = require('fs'); console.log(fs.realpathSync(require.resolve('@tos/sdk', { paths: ['/app/extensions/acme'] })))";
    expect((await docker(['run', '--rm', ...HARDENED, IMAGE, 'node', '-e', script])).trim()).toBe('/app/dist/src/tools/sdk/index.js');
  }, 60_000);
});
