import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure } from '../../src/tools/sdk/testing';
import { DOCKER_FIXTURES, findDockerd, runningContainers, startDockerEngine, startRegistry, type DockerEngine, type Registry } from '../../test/support/docker/docker-engine';
import { describeWith } from '../../test/support/netmon/requires';
import { ContainerBuildTool } from './container-build.tool';
import { DockerClients } from './docker/docker-clients';

interface Output {
  image: string;
  image_id: string;
  size_bytes: number;
  layers: number;
  steps: string[];
  context_files: number;
  duration_ms: number;
  pushed: boolean;
  digest: string | null;
}

describeWith(findDockerd(), 'docker.io docker-registry busybox-static (as root)')('container-build', () => {
  let engine: DockerEngine;
  let registry: Registry;
  let workspace: string;
  const tool = new ContainerBuildTool(new DockerClients());
  const build = (input: Record<string, unknown>, overrides: { signal?: AbortSignal; host?: string; secrets?: Record<string, string>; onProgress?: (percent: number, message?: string) => void } = {}) =>
    runTool<Output>(tool, input, { config: { DOCKER_HOST: overrides.host ?? engine.host }, workspaceRoot: workspace, signal: overrides.signal, secrets: overrides.secrets, onProgress: overrides.onProgress });

  beforeAll(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'tos-build-ws-'));
    cpSync(DOCKER_FIXTURES, workspace, { recursive: true });
    [engine, registry] = await Promise.all([startDockerEngine(), startRegistry()]);
    console.log(`dockerd answered ${engine.startupMs} ms after its start`);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([engine?.stop(), registry?.stop()]);
    rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  it('builds and tags an image, reporting every step as progress, and leaves .dockerignore-d files out', async () => {
    const progress: number[] = [];
    const out = await build({ context: 'hello', image: 'shop/hello', tag: '1.0.0' }, { onProgress: (percent) => progress.push(percent) });
    expect(out).toMatchObject({
      image: 'shop/hello:1.0.0',
      image_id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      layers: 2,
      steps: ['Step 1/3 : FROM busybox:local', 'Step 2/3 : COPY greeting.txt /greeting.txt', 'Step 3/3 : LABEL org.opencontainers.image.title=hello'],
      context_files: 3,
      pushed: false,
      digest: null,
    });
    expect(progress.at(-1)).toBe(100);
    const image = await engine.docker.getImage('shop/hello:1.0.0').inspect();
    expect(image.Id).toBe(out.image_id);
    expect(image.Config.Labels).toMatchObject({ 'org.opencontainers.image.title': 'hello' });
    expect(out.size_bytes).toBe(image.Size);
  });

  it('builds a target stage with build args and labels, FROM scratch', async () => {
    const out = await build({ context: 'stages', image: 'shop/stages', tag: 'release', target: 'release', build_args: { FLAVOUR: 'spicy' }, labels: { team: 'platform' } });
    // The classic builder runs every stage before the target (labels are a last step); the image is the target's alone.
    expect(out.steps.slice(-2)).toEqual(['Step 7/8 : COPY --from=base /flavour /flavour', 'Step 8/8 : LABEL team=platform']);
    const image = await engine.docker.getImage(out.image_id).inspect();
    expect(image.Config.Labels).toMatchObject({ team: 'platform' });
    expect(image.RootFS.Layers).toHaveLength(1);
    // The build arg reached the RUN step: read the file out of a container that is never started.
    const container = await engine.docker.createContainer({ Image: out.image_id, Cmd: ['none'], NetworkDisabled: true, HostConfig: { NetworkMode: 'none' } });
    try {
      const archive = await container.getArchive({ path: '/flavour' });
      const chunks: Buffer[] = [];
      for await (const chunk of archive) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString('latin1')).toContain('spicy\n');
    } finally {
      await container.remove();
    }
  });

  it('pushes to the registry with an auth config, and the registry holds the manifest under the digest it reports', async () => {
    const image = `${registry.address}/shop/hello`;
    const out = await build({ context: 'hello', image, tag: 'v2', push: true }, { secrets: { REGISTRY_USERNAME: 'ci', REGISTRY_PASSWORD: 'not-checked-by-this-registry' } });
    expect(out).toMatchObject({ image: `${image}:v2`, pushed: true, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const manifest = await fetch(`${registry.url}/v2/shop/hello/manifests/v2`, { headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } });
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('docker-content-digest')).toBe(out.digest);
  });

  it.each([
    ['a Dockerfile with an unknown instruction', { context: 'broken' }, /unknown instruction: FORM/i],
    ['a step that fails', { context: 'failing' }, /returned a non-zero code: 1/],
    ['a missing Dockerfile', { context: 'hello', dockerfile: 'Nope.Dockerfile' }, /No Dockerfile 'Nope.Dockerfile'/],
  ])('refuses %s as INVALID_INPUT with the reason', async (_, input, message) => {
    const err = await toolFailure(build({ image: 'shop/bad', ...input }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT' });
    expect(err.message).toMatch(message);
  });

  it('refuses a context outside the workspace or missing', async () => {
    expect(await toolFailure(build({ context: '../etc', image: 'shop/x' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'context' } });
    expect(await toolFailure(build({ context: 'no-such-folder', image: 'shop/x' }))).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('reports an engine that does not answer as retryable, and a registry that refuses the push', async () => {
    const down = await toolFailure(build({ context: 'hello', image: 'shop/x' }, { host: `unix://${path.join(workspace, 'no.sock')}` }));
    expect(down).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { service: 'docker' } } });
    const nowhere = await toolFailure(build({ context: 'hello', image: '127.0.0.1:9/shop/hello', push: true }));
    expect(nowhere).toMatchObject({ code: 'TOOL_ERROR', details: { upstream: { service: 'registry' } } });
    expect(nowhere.message).toMatch(/The push to 127\.0\.0\.1:9 failed/);
  });

  it('stops the build on cancel and leaves no build container running on the engine', async () => {
    const abort = new AbortController();
    let stepped = () => {};
    const atRun = new Promise<void>((resolve) => (stepped = resolve));
    const run = build({ context: 'slow', image: 'shop/slow', no_cache: true }, { signal: abort.signal, onProgress: (_, message) => message === 'step 2/2' && stepped() });
    await atRun;
    // The RUN step's container is up: the cancel must take it down.
    for (let i = 0; i < 50 && (await runningContainers(engine.docker)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    abort.abort();
    await expect(run).rejects.toBeDefined();
    let running = await runningContainers(engine.docker);
    for (let i = 0; i < 100 && running.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      running = await runningContainers(engine.docker);
    }
    expect(running).toEqual([]);
    await expect(engine.docker.getImage('shop/slow:latest').inspect()).rejects.toMatchObject({ statusCode: 404 });
  }, 30_000);
});
