import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { DOCKER_FIXTURES, findDockerd, guardEngine, runningContainers, startDockerEngine, startRegistry, type DockerEngine, type GuardedEngine, type Registry } from '../../../test/support/docker/docker-engine';
import { startDnsmasq, type Dnsmasq } from '../../../test/support/netmon/dnsmasq';
import { until } from '../../../test/support/poll';
import { startRecordingServer, type RecordingServer } from '../../../test/support/recording-server';
import { describeWith } from '../../../test/support/prerequisites';
import { ContainerBuildTool } from './container-build.tool';
import { DockerClients } from '../../integrations/docker';

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
  const build = (
    input: Record<string, unknown>,
    overrides: { signal?: AbortSignal; host?: string; secrets?: Record<string, string>; onProgress?: (percent: number, message?: string) => void; dnsServers?: string[] } = {},
  ) =>
    runTool<Output>(tool, input, {
      config: { DOCKER_HOST: overrides.host ?? engine.host },
      workspaceRoot: workspace,
      signal: overrides.signal,
      secrets: overrides.secrets,
      onProgress: overrides.onProgress,
      dnsServers: overrides.dnsServers,
    });

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

  describe('what the engine connects to', () => {
    let guard: GuardedEngine;
    let dns: Dnsmasq;
    // Names the loopback resolver answers with refused addresses: the policy refuses them at the
    // address check, and nothing is ever sent to them.
    const PRIVATE = 'registry.corp.test';
    const METADATA = 'metadata.corp.test';
    const project = (name: string, dockerfile: string) => {
      mkdirSync(path.join(workspace, 'egress', name), { recursive: true });
      writeFileSync(path.join(workspace, 'egress', name, 'Dockerfile'), dockerfile);
      return `egress/${name}`;
    };

    beforeAll(async () => {
      // Held for the engine's own platform (amd64 here) under a private registry's name.
      await engine.docker.getImage('busybox:local').tag({ repo: `${PRIVATE}/held`, tag: '1' });
      [guard, dns] = await Promise.all([guardEngine(engine), startDnsmasq([`--host-record=${PRIVATE},10.0.0.1`, `--host-record=${METADATA},169.254.169.254`])]);
    });
    afterAll(async () => {
      await Promise.all([guard?.stop(), dns?.stop()]);
    });

    it.each([
      ['a push to the metadata address', () => ({ context: 'hello', image: '169.254.169.254:80/shop/x', push: true }), 'image', /link-local address \(169\.254\.169\.254\)/],
      ['a push to a registry whose name resolves to a private address', () => ({ context: 'hello', image: `${PRIVATE}:5000/shop/x`, push: true }), 'image', /private \(RFC 1918\) address \(10\.0\.0\.1\)/],
      ['a FROM image of a private registry', () => ({ context: project('from', `FROM ${PRIVATE}/base:1\nRUN true\n`), image: 'shop/x' }), 'dockerfile', /10\.0\.0\.1/],
      [
        'a FROM image given by a build argument',
        () => ({ context: project('from-arg', 'ARG BASE=busybox:local\nFROM ${BASE} AS build\nFROM build\n'), image: 'shop/x', build_args: { BASE: '169.254.169.254:80/x:1' } }),
        'dockerfile',
        /169\.254\.169\.254/,
      ],
      ['a COPY --from image of the metadata host', () => ({ context: project('copy-from', `FROM busybox:local\nCOPY --from=${METADATA}/x:1 /a /a\n`), image: 'shop/x' }), 'dockerfile', /169\.254\.169\.254/],
      [
        'a FROM image the engine holds, for another platform (it would be pulled)',
        () => ({ context: project('from-platform', `FROM --platform=linux/arm64 ${PRIVATE}/held:1\n`), image: 'shop/x' }),
        'dockerfile',
        /10\.0\.0\.1/,
      ],
      ['an ADD of a URL on the metadata host', () => ({ context: project('add-url', `FROM busybox:local\nADD http://${METADATA}/latest/meta-data/ /meta\n`), image: 'shop/x' }), 'dockerfile', /169\.254\.169\.254/],
    ])('refuses %s at the address check, before the engine is asked to build, pull or push', async (_, input, parameter, address) => {
      const err = await toolFailure(build(input(), { host: guard.host, dnsServers: [dns.server] }));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
      expect(err.message).toMatch(address);
      expect(guard.refused).toEqual([]);
    });

    it('checks no FROM image the engine holds for the platform (none is pulled), and every one it lacks, Docker Hub ones too', async () => {
      // busybox:local is held: the build is asked for (and refused by the guard, which proves the check passed).
      await toolFailure(build({ context: project('held', 'ARG BASE=busybox\nFROM ${BASE}:local\n'), image: 'shop/x' }, { host: guard.host, dnsServers: [dns.server] }));
      expect(guard.refused).toEqual([expect.stringMatching(/^POST \/(v[\d.]+\/)?build\?/)]);
      guard.refused.splice(0);
      // Even under a private registry's name: held for the build's platform, it is not pulled.
      await toolFailure(build({ context: project('held-private', `FROM ${PRIVATE}/held:1\n`), image: 'shop/x' }, { host: guard.host, dnsServers: [dns.server] }));
      expect(guard.refused).toEqual([expect.stringMatching(/^POST \/(v[\d.]+\/)?build\?/)]);
      guard.refused.splice(0);
      // Not held: its registry, here docker.io, must resolve through the policy; the test resolver knows no such name.
      const err = await toolFailure(build({ context: project('not-held', 'FROM shop/never-built:1\n'), image: 'shop/x' }, { host: guard.host, dnsServers: [dns.server] }));
      expect(err.message).toMatch(/registry-1\.docker\.io/);
      expect(guard.refused).toEqual([]);
    });
  });

  describe('registry credentials', () => {
    let recorder: RecordingServer;
    const address = () => new URL(recorder.url).host;
    const CREDENTIALS = { REGISTRY_USERNAME: 'ci', REGISTRY_PASSWORD: 'push-secret-0042' };
    const basic = `Basic ${Buffer.from('ci:push-secret-0042').toString('base64')}`;

    // A registry that wants basic auth: it answers 401 with a Basic challenge and records what came.
    // One per test: the engine may go on retrying a cancelled push, and its retries must not land
    // in the next test's registry.
    beforeEach(async () => {
      recorder = await startRecordingServer(() => ({ status: 401, headers: { 'www-authenticate': 'Basic realm="recording"', 'docker-distribution-api-version': 'registry/2.0', 'content-type': 'application/json' }, body: '{"errors":[{"code":"UNAUTHORIZED"}]}' }));
    });
    afterEach(() => recorder?.close());
    const authorizations = () => recorder.received.map(({ headers }) => headers.authorization).filter(Boolean);

    it('sends them to the registry saved with them as REGISTRY_URL', async () => {
      const abort = new AbortController();
      const push = build({ context: 'hello', image: `${address()}/shop/hello`, tag: 'auth', push: true }, { secrets: { ...CREDENTIALS, REGISTRY_URL: `http://${address()}/` }, signal: abort.signal });
      // The engine retries a refused authorised push for a minute: stop once the credentials came.
      const sent = await until('the credentials to reach the registry', async () => (authorizations().length > 0 ? authorizations() : undefined), 30_000);
      abort.abort();
      await push.catch(() => undefined);
      expect(sent).toContain(basic);
    });

    it.each([
      ['saved for another registry', { ...CREDENTIALS, REGISTRY_URL: 'registry.example.com' }, /belong to registry\.example\.com \(REGISTRY_URL\) and were not sent to 127\.0\.0\.1:\d+/],
      ['saved with no registry', CREDENTIALS, /save the registry they belong to as the secret REGISTRY_URL/],
    ])('never sends them to a registry the caller names when they were %s', async (_, secrets, reason) => {
      const err = await toolFailure(build({ context: 'hello', image: `${address()}/shop/hello`, tag: 'auth', push: true }, { secrets }));
      expect(recorder.received.length).toBeGreaterThan(0);
      expect(authorizations()).toEqual([]);
      expect(recorder.received.some(({ headers }) => JSON.stringify(headers).includes('push-secret-0042'))).toBe(false);
      expect(err.message).toMatch(reason);
    });
  });
});
