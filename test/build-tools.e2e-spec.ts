/**
 * container-build through the service's doors against a real Docker engine: an async REST invoke
 * that reports the build's steps as progress and ends with the image, a cancel through
 * DELETE /v1/executions/{id} that leaves the engine with nothing running, and an MCP tools/call
 * whose progress notifications follow the build.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { FIXTURE_OSV_DIR } from './support/code-tools/workspace';
import { buildFixtureImage, DOCKER_FIXTURES, findDockerd, runningContainers, SCAN_FIXTURE, startDockerEngine, type DockerEngine } from './support/docker/docker-engine';
import { describeWith } from './support/prerequisites';
import { until } from './support/poll';
import { startRecordingServer } from './support/recording-server';

const workspace = mkdtempSync(path.join(tmpdir(), 'tos-build-e2e-'));
cpSync(DOCKER_FIXTURES, workspace, { recursive: true });

describeWith(findDockerd(), 'docker.io docker-registry busybox-static (as root)')('Build tools through the service', () => {
  let engine: DockerEngine;
  // Loopback opened for the recording registry; everything else keeps the default policy.
  const env: Record<string, string> = { WORKSPACE_ROOT: workspace, OSV_DATA_DIR: FIXTURE_OSV_DIR, SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.0/8' };

  // Registered before useTestApp's: the engine is up, and its socket in the settings, when the app starts.
  beforeAll(async () => {
    engine = await startDockerEngine();
    env.DOCKER_HOST = engine.host;
  }, 60_000);
  const suite = useTestApp(DATABASE_MODES[0], { env });
  afterAll(async () => {
    await engine?.stop();
    rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();
  const submit = async (inputs: object) => {
    const res = await suite.t.request({ method: 'POST', url: '/v1/tools/container-build/invoke?async=true', key: suite.acme.key, payload: inputs });
    expect(res.statusCode).toBe(202);
    return res.json().execution_id as string;
  };

  it('runs an async build to the image, with the steps as progress', async () => {
    const id = await submit({ context: 'hello', image: 'shop/hello', tag: 'async' });
    const done = await until('the build to finish', async () => {
      const current = await execution(id);
      return current.status === 'success' || current.status === 'error' ? current : undefined;
    }, 60_000);
    expect(done).toMatchObject({ status: 'success', progress: 100, result: { image: 'shop/hello:async', layers: 2, pushed: false } });
    expect((await engine.docker.getImage('shop/hello:async').inspect()).Id).toBe(done.result.image_id);
  });

  it('cancels a running build through DELETE /v1/executions/{id}: the engine runs nothing after it', async () => {
    const id = await submit({ context: 'slow', image: 'shop/slow', no_cache: true });
    await until('the RUN step to be running', async () => ((await runningContainers(engine.docker)).length > 0 ? true : undefined), 30_000);
    const cancel = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: suite.acme.key });
    expect(cancel.json()).toMatchObject({ status: 'cancelled' });
    await until('the build container to be gone', async () => ((await runningContainers(engine.docker)).length === 0 ? true : undefined), 15_000);
    await expect(engine.docker.getImage('shop/slow:latest').inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it('streams the build steps as MCP progress notifications before the result', async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
    const client = new Client({ name: 'build-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${suite.acme.key}` } } }));
    try {
      const progress: string[] = [];
      const result = await client.callTool({ name: 'container-build', arguments: { context: 'hello', image: 'shop/hello', tag: 'mcp', no_cache: true } }, undefined, {
        onprogress: ({ progress: percent, message }) => void progress.push(`${percent} ${message}`),
      });
      expect(result.structuredContent).toMatchObject({ image: 'shop/hello:mcp', layers: 2 });
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((line) => /^\d+ step \d\/3$/.test(line))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('scans an engine image with image-scan, which runs isolated in a worker thread with a Docker client of its own', async () => {
    await buildFixtureImage(engine.docker, SCAN_FIXTURE, 'shop/scan-fixture:e2e');
    const res = await suite.t.request({ method: 'POST', url: '/v1/tools/image-scan/invoke', key: suite.acme.key, payload: { inputs: { image: 'shop/scan-fixture:e2e' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ image: 'shop/scan-fixture:e2e', os: { id: 'debian', version: '12' } });
    expect(res.json().result.packages.map(({ name }: { name: string }) => name)).toEqual(expect.arrayContaining(['openssl', 'lodash', 'PyYAML']));
  }, 60_000);

  // The refusals of non-loopback registries are tested in container-build.tool.spec.ts behind an
  // engine guard: here a regression would have the engine send a packet to them.
  it('never sends registry credentials to a registry they were not saved for, set through the secrets API', async () => {
    const invoke = (inputs: object) => suite.t.request({ method: 'POST', url: '/v1/tools/container-build/invoke', key: suite.acme.key, payload: { inputs } });
    // A registry that asks for basic auth and records what it gets.
    const registry = await startRecordingServer(() => ({ status: 401, headers: { 'www-authenticate': 'Basic realm="e2e"', 'docker-distribution-api-version': 'registry/2.0' }, body: '{}' }));
    try {
      for (const [name, value] of Object.entries({ REGISTRY_USERNAME: 'ci', REGISTRY_PASSWORD: 'e2e-push-secret', REGISTRY_URL: 'registry.example.com' })) {
        expect((await suite.t.request({ method: 'PUT', url: `/v1/secrets/${name}`, key: suite.acme.key, payload: { value } })).statusCode).toBe(201);
      }
      const pushed = await invoke({ context: 'hello', image: `${new URL(registry.url).host}/shop/hello`, tag: 'e2e', push: true });
      expect(registry.received.length).toBeGreaterThan(0);
      expect(registry.received.map(({ headers }) => headers.authorization).filter(Boolean)).toEqual([]);
      expect(pushed.json().error).toMatchObject({ code: 'TOOL_ERROR', details: { upstream: { service: 'registry' } } });
      expect(pushed.json().error.message).toMatch(/belong to registry\.example\.com \(REGISTRY_URL\) and were not sent/);
    } finally {
      await registry.close();
    }
  }, 60_000);
});
