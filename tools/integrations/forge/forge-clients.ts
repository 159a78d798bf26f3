import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ToolContext } from '@tos/sdk';
import { ConditionalRequests } from './conditional-requests';
import { ForgeClient } from './forge-client';
import { loadOctokit, type OctokitInstance } from './octokit';

/** REST API version every request pins (GitHub's `X-GitHub-Api-Version`). */
const API_VERSION = '2022-11-28';
/** Distinct (forge, token) pairs kept; each holds only auth and defaults. */
const MAX_CLIENTS = 500;
const USER_AGENT = 'tool-orchestration-service';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The default fetch of every Octokit here: a request outside a call would bypass the egress policy. */
const noFetchOutsideACall: typeof globalThis.fetch = () => Promise.reject(new Error('forge requests go through the calling tool\'s ctx.http.fetch'));

/**
 * One Octokit per forge and token, made once and reused by every call of every forge tool; the
 * token is FORGE_TOKEN: the calling account's secret, else the operator's setting.
 */
@Injectable()
export class ForgeClients {
  private readonly clients = new LRUCache<string, OctokitInstance>({ max: MAX_CLIENTS });
  private readonly conditional = new ConditionalRequests();

  /** The forge for this call; `requireToken` for writes (a missing token fails with how to set it). */
  async connect(ctx: ToolContext, options: { requireToken?: boolean } = {}): Promise<ForgeClient> {
    const baseUrl = String(ctx.config.FORGE_API_URL).replace(/\/+$/, '');
    const token = options.requireToken ? await ctx.secrets.get('FORGE_TOKEN') : await ctx.secrets.find('FORGE_TOKEN');
    // Keyed by a digest: the map never holds a token as a key, and the validator cache is per token.
    const key = createHash('sha256').update(`${baseUrl}\n${token ?? ''}`).digest('hex');
    let octokit = this.clients.get(key);
    if (!octokit) this.clients.set(key, (octokit = await createOctokit(baseUrl, token)));
    return new ForgeClient(octokit, new URL(baseUrl).origin, { fetch: this.conditional.wrap(ctx.http.fetch, key) }, ctx.signal, token !== undefined);
  }

  get size(): number {
    return this.clients.size;
  }
}

async function createOctokit(baseUrl: string, token: string | undefined): Promise<OctokitInstance> {
  const Octokit = await loadOctokit();
  const octokit = new Octokit({ auth: token, baseUrl, userAgent: USER_AGENT, log: quiet, request: { fetch: noFetchOutsideACall } });
  octokit.hook.before('request', (options) => {
    options.headers['x-github-api-version'] = API_VERSION;
  });
  return octokit;
}
