/**
 * The container form of stdio upstreams (docs/upstreams.md#the-container-form), run for real on
 * both engines: an image of the published `@modelcontextprotocol/server-everything` (copied from
 * node_modules onto the node image assembled from this machine, test/support/docker/package-image.ts)
 * on the private test engine, registered by the operator with `image`, called through REST and
 * MCP. `docker inspect` shows the confinement; idle shutdown removes the container, a killed one
 * is started again after its backoff, and a crashed process's leftovers are removed at start.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type Docker from 'dockerode';
import { StdioSupervisor } from '../src/upstreams/stdio-supervisor';
import { startTestApp, useTestApp } from './support/app';
import { dockerCli } from './support/deploy/docker-cli';
import { importNodeBaseImage } from './support/deploy/node-image';
import { BASE_IMAGE, findDockerd, startDockerEngine, type DockerEngine } from './support/docker/docker-engine';
import { buildPackageImage } from './support/docker/package-image';
import { describeEachEngine } from './support/engines';
import { operator } from './support/operator-action';
import { until } from './support/poll';
import { describeWith } from './support/prerequisites';

const IMAGE = 'tos-everything:test';
const UPSTREAM_LABEL = 'tos.stdio.upstream';
const OWNER_LABEL = 'tos.stdio.owner';
/** A pid no process has (above the kernel's pid_max limit of 2^22). */
const DEAD_PID = 4_194_305;

describeWith(findDockerd(), 'docker.io docker-registry busybox-static (as root)')('stdio upstreams in containers', () => {
  let engine: DockerEngine;
  // Read by each suite's app when it starts (after this beforeAll): the engine's socket is known only then.
  const env: Record<string, string> = {
    SECRETS_KEY: randomBytes(32).toString('base64'),
    UPSTREAMS_STDIO: 'true',
    UPSTREAMS_STDIO_IDLE_SECONDS: '3',
    UPSTREAMS_STDIO_CONTAINER_MEMORY: '256m',
    UPSTREAMS_STDIO_CONTAINER_CPUS: '1.5',
    UPSTREAMS_STDIO_CONTAINER_PIDS: '96',
    UPSTREAMS_STDIO_CONTAINER_TMPFS_MIB: '16',
  };

  beforeAll(async () => {
    engine = await startDockerEngine();
    env.UPSTREAMS_STDIO_DOCKER_HOST = engine.host;
    await importNodeBaseImage(dockerCli(engine.host));
    await buildPackageImage(engine.docker, '@modelcontextprotocol/server-everything', IMAGE);
  }, 300_000);
  afterAll(async () => {
    await engine?.stop();
  }, 60_000);

  const containersOf = async (upstreamId: string): Promise<Docker.ContainerInfo[]> => engine.docker.listContainers({ all: true, filters: { label: [`${UPSTREAM_LABEL}=${upstreamId}`] } });
  /** A long-running busybox container labelled as a stdio container of `owner`. */
  const leftover = async (owner: string): Promise<string> => {
    const container = await engine.docker.createContainer({ Image: BASE_IMAGE, Cmd: ['sleep', '600'], Labels: { [OWNER_LABEL]: owner, [UPSTREAM_LABEL]: 'up_leftover' }, HostConfig: { NetworkMode: 'none' } });
    await container.start();
    return container.id;
  };
  const exists = async (id: string) => (await engine.docker.listContainers({ all: true, filters: { id: [id] } })).length > 0;

  describeEachEngine('image form', (mode) => {
    // Before the app starts: what an earlier process on this host left, and containers that are not its to remove.
    const left: Record<'dead' | 'earlierLife' | 'live' | 'elsewhere', string> = { dead: '', earlierLife: '', live: '', elsewhere: '' };
    beforeAll(async () => {
      left.dead = await leftover(`${hostname()}/${DEAD_PID}/1`);
      // This very pid, started at another time: a restarted container where the service is pid 1 again.
      left.earlierLife = await leftover(`${hostname()}/${process.pid}/1`);
      left.live = await leftover(`${hostname()}/1/1`);
      left.elsewhere = await leftover(`another-host/${DEAD_PID}/1`);
    });
    const suite = useTestApp(mode, { env });
    afterAll(async () => {
      for (const id of [left.live, left.elsewhere]) await engine.docker.getContainer(id).remove({ force: true }).catch(() => undefined);
    });

    let accounts = 0;
    const account = async () => {
      const name = `box-${++accounts}`;
      return { ...(await suite.t.createAccount(name)), name };
    };
    const invoke = (key: string, toolId: string, payload: object) => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke`, key, payload });
    const mcp = (key: string, message: object) =>
      suite.t.request({ method: 'POST', url: '/v1/mcp', key, payload: { jsonrpc: '2.0', id: 1, ...message }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
    const supervisor = () => suite.t.app.get(StdioSupervisor);
    const addImage = (owner: { name: string }, args: Record<string, unknown>) => operator(suite, 'upstreams.add', { account: owner.name, transport: 'stdio', ...args });

    it('removed at start what a crashed process on this host left, and nothing another process owns', async () => {
      expect(await exists(left.dead)).toBe(false);
      expect(await exists(left.earlierLife)).toBe(false);
      expect(await exists(left.live)).toBe(true);
      expect(await exists(left.elsewhere)).toBe(true);
    });

    it('runs the image confined, with no network, a secret passed by name; called through REST and MCP', async () => {
      const owner = await account();
      expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/BOX_SECRET', key: owner.key, payload: { value: 'box-very-secret-value' } })).statusCode).toBeLessThan(300);
      const added = await addImage(owner, { name: 'boxed', image: IMAGE, args: ['stdio'], env_from_secrets: { BOX_TOKEN: 'BOX_SECRET' } });
      expect(added.status).toBe(200);
      const upstream = added.body.result;
      expect(upstream).toMatchObject({ transport: 'stdio', stdio: { image: IMAGE, args: ['stdio'], allow_egress: false }, status: { last_error: null } });
      expect(JSON.stringify(added.body)).not.toContain('box-very-secret-value');

      const sum = await invoke(owner.key, 'boxed.get-sum', { a: 40, b: 2 });
      expect(sum.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: expect.stringContaining('42') }] } });
      const overMcp = (await mcp(owner.key, { method: 'tools/call', params: { name: 'boxed.echo', arguments: { message: 'from a box' } } })).json().result;
      expect(overMcp.isError).toBeFalsy();
      expect(JSON.stringify(overMcp)).toContain('from a box');
      const env = JSON.stringify((await invoke(owner.key, 'boxed.get-env', {})).json().result);
      expect(env).toContain('BOX_TOKEN');
      expect(env).not.toContain('DOCKER_HOST');
      expect(env).not.toContain('SECRETS_KEY');

      const name = supervisor().containerOf(upstream.id)!;
      expect(name).toMatch(new RegExp(`^tos-stdio-${upstream.id}-`));
      const inspected = await engine.docker.getContainer(name).inspect();
      expect(inspected.Config.Labels).toMatchObject({ [UPSTREAM_LABEL]: upstream.id, [OWNER_LABEL]: expect.stringMatching(new RegExp(`^${hostname()}/${process.pid}/\\d+$`)) });
      expect(inspected.Config.User).toBe('65534:65534');
      expect(inspected.Config.Env).toContain('BOX_TOKEN=box-very-secret-value');
      expect(inspected.Args.join(' ')).not.toContain('box-very-secret-value');
      expect(inspected.HostConfig).toMatchObject({
        NetworkMode: 'none',
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Init: true,
        AutoRemove: true,
        PidsLimit: 96,
        Memory: 256 * 1024 * 1024,
        MemorySwap: 256 * 1024 * 1024,
        NanoCpus: 1_500_000_000,
        Tmpfs: { '/tmp': 'rw,noexec,nosuid,nodev,size=16m' },
      });
      expect(inspected.HostConfig.CapAdd ?? []).toEqual([]);
      expect(Object.keys(inspected.NetworkSettings.Networks)).toEqual(['none']);
    }, 120_000);

    it('restarts a killed container on the next call after its backoff; idle shutdown removes the container', async () => {
      const owner = await account();
      // The image's own user (node, 1000) instead of the default nobody.
      const upstream = (await addImage(owner, { name: 'boxed', image: IMAGE, args: ['stdio'], user: '1000:1000' })).body.result;
      expect(upstream.stdio).toMatchObject({ user: '1000:1000' });
      expect((await invoke(owner.key, 'boxed.echo', { message: 'one' })).json().status).toBe('success');
      const first = supervisor().containerOf(upstream.id)!;
      expect(first).not.toBeNull();
      expect((await engine.docker.getContainer(first).inspect()).Config.User).toBe('1000:1000');

      await engine.docker.getContainer(first).kill();
      await until('the supervisor saw it end', async () => (supervisor().containerOf(upstream.id) === null ? true : undefined), 10_000);
      await until('the killed container removed (--rm)', async () => (!(await containersOf(upstream.id)).some((c) => c.Names.includes(`/${first}`)) ? true : undefined), 10_000);
      const before = Date.now();
      expect((await invoke(owner.key, 'boxed.echo', { message: 'two' })).json()).toMatchObject({ status: 'success', result: { content: [{ text: expect.stringContaining('two') }] } });
      // The first restart after a crash waits 1 s (docs/upstreams.md#supervision).
      expect(Date.now() - before).toBeGreaterThanOrEqual(800);
      const second = supervisor().containerOf(upstream.id)!;
      expect(second).not.toBeNull();
      expect(second).not.toBe(first);
      expect((await containersOf(upstream.id)).map((c) => c.State)).toEqual(['running']);

      // Idle for UPSTREAMS_STDIO_IDLE_SECONDS (3 s here): stopped, and no container left on the engine.
      await until('stopped when idle', async () => (supervisor().containerOf(upstream.id) === null ? true : undefined), 15_000, 100);
      await until('its container removed', async () => ((await containersOf(upstream.id)).length === 0 ? true : undefined), 15_000, 200);
      expect((await operator(suite, 'upstreams.remove', { account: owner.name, name: 'boxed' })).status).toBe(200);
    }, 120_000);

    it('app close removes the containers it started', async () => {
      const owner = await account();
      const upstream = (await addImage(owner, { name: 'boxed', image: IMAGE, args: ['stdio'] })).body.result;
      expect((await invoke(owner.key, 'boxed.echo', { message: 'x' })).json().status).toBe('success');
      expect(await containersOf(upstream.id)).toHaveLength(1);
      await suite.t.close();
      expect(await containersOf(upstream.id)).toEqual([]);
      // The suite's own afterAll closes an app: a fresh one on the same database.
      suite.t = await startTestApp({ env: suite.env });
    }, 60_000);

    it('refuses an image whose registration would steer the docker CLI (400); never pulls a missing image', async () => {
      const owner = await account();
      const steering = await addImage(owner, { name: 'steer', image: IMAGE, env_from_secrets: { DOCKER_HOST: 'X' } });
      expect(steering.status).toBe(400);
      expect(steering.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'env_from_secrets.DOCKER_HOST' } });
      // Not on the engine: registered with its error, nothing fetched.
      const missing = await addImage(owner, { name: 'missing', image: '127.0.0.1:9/nowhere/mcp:1' });
      expect(missing.status).toBe(200);
      expect(missing.body.result.status.last_error).toMatch(/could not be started/);
    }, 60_000);
  });
});
