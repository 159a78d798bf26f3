import { Injectable } from '@nestjs/common';
import type Docker from 'dockerode';
import { ToolError, type ToolContext } from '@tos/sdk';

/**
 * One Docker Engine API client per DOCKER_HOST, made once and shared by every build tool call:
 * `unix:///path/docker.sock` (the default, /var/run/docker.sock) or `tcp://host:port`, whose
 * address must pass the egress policy.
 */
@Injectable()
export class DockerClients {
  private readonly clients = new Map<string, Docker>();

  async connect(ctx: ToolContext): Promise<Docker> {
    const host = String(ctx.config.DOCKER_HOST ?? 'unix:///var/run/docker.sock');
    let client = this.clients.get(host);
    if (!client) {
      // dockerode loads on the first engine call, not with the catalogue.
      const { default: DockerClient } = await import('dockerode');
      client = new DockerClient(await options(host, ctx));
      this.clients.set(host, client);
    } else if (host.startsWith('tcp://')) {
      await ctx.net.resolve(new URL(host).hostname, { parameter: 'DOCKER_HOST' });
    }
    return client;
  }
}

async function options(host: string, ctx: ToolContext): Promise<Docker.DockerOptions> {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('tcp://')) {
    const url = new URL(host);
    const { address } = await ctx.net.resolve(url.hostname, { parameter: 'DOCKER_HOST' });
    return { host: address, port: Number(url.port || 2375), protocol: 'http' };
  }
  throw new ToolError(`DOCKER_HOST must be unix:///path/to/docker.sock or tcp://host:port, not '${host}'`);
}

/** An engine API call; an engine that does not answer is retryable, its refusals say why. */
export async function engineCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const { statusCode, code, json, message } = err as { statusCode?: number; code?: string; json?: { message?: string }; message?: string };
    if (statusCode === undefined) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ToolError(`The Docker engine at DOCKER_HOST did not answer: ${code ?? message}`, { retryable: true, details: { upstream: { service: 'docker' } } });
    }
    const reason = json?.message ?? message ?? `HTTP ${statusCode}`;
    const upstream = { service: 'docker', status: statusCode };
    if (statusCode >= 500) throw new ToolError(`The Docker engine failed: ${reason}`, { retryable: true, details: { upstream } });
    throw new ToolError(`The Docker engine refused the request: ${reason}`, { code: 'INVALID_INPUT', details: { upstream } });
  }
}
