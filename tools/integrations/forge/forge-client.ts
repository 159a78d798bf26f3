import { ToolError } from '@tos/sdk';
import { forgeError, forgeMessage, isOctokitFailure, type FailureContext, type OctokitFailure } from './forge-errors';
import type { OctokitInstance } from './octokit';

/** Largest page GitHub serves. */
export const MAX_PER_PAGE = 100;

/** Per-call options every request carries: the call's egress-checked fetch, bound to its signal. */
interface CallOptions {
  fetch: typeof globalThis.fetch;
}

/**
 * What a failed request was about, so a 404 names the input at fault. `parameter` is the input
 * the request targets beyond the repository (`pull_number`, `workflow`), or `repo`.
 */
export interface Subject {
  owner: string;
  repo: string;
  parameter: string;
  value?: string | number;
}

export interface WriteOptions {
  subject: Subject;
  /** The input a 422 concerns, read from the forge's message; null leaves it a TOOL_ERROR. */
  unprocessable?: (message: string) => string | null;
}

export interface ListOptions<R, T> {
  subject: Subject;
  /** At most this many items, following `Link: rel="next"`. */
  limit: number;
  /** The items of one page's body (for `{ total_count, check_runs }`-style answers). */
  items?: (data: R) => T[];
  /** Stop following pages once an item satisfies this (a search). */
  stopWhen?: (item: T) => boolean;
}

export interface Listed<T> {
  items: T[];
  /** More items exist beyond `limit`. */
  more: boolean;
}

type Method<P, R> = (params: P & { request: CallOptions }) => Promise<{ data: R; headers: Record<string, string | number | undefined> }>;

/**
 * One call's view of the forge: the token's shared Octokit, with every request sent through the
 * call's `ctx.http.fetch` (the egress policy and the call's signal) and every failure mapped to
 * a ToolError a client can act on.
 */
export class ForgeClient {
  constructor(
    readonly octokit: OctokitInstance,
    /** `scheme://host:port` of FORGE_API_URL: pagination links must stay on it (they carry the token). */
    private readonly apiOrigin: string,
    private readonly call: CallOptions,
    private readonly signal: AbortSignal,
    private readonly hasToken: boolean,
  ) {}

  get rest(): OctokitInstance['rest'] {
    return this.octokit.rest;
  }

  /** One request that reads. */
  async read<P, R>(method: Method<P, R>, params: P, subject: Subject): Promise<R> {
    return (await this.send(method, params, { subject })).data;
  }

  /** One request that changes something; a 422 becomes INVALID_INPUT when `unprocessable` names the input. */
  async write<P, R>(method: Method<P, R>, params: P, options: WriteOptions): Promise<{ status: number; data: R }> {
    const response = await this.send(method, params, options);
    return { status: (response as unknown as { status: number }).status, data: response.data };
  }

  /** A paged list, followed through GitHub's `Link` headers up to `limit` items. */
  async list<P, R, T = R extends Array<infer I> ? I : never>(method: Method<P, R>, params: P, options: ListOptions<R, T>): Promise<Listed<T>> {
    const itemsOf = options.items ?? ((data: R) => data as unknown as T[]);
    const perPage = Math.min(options.limit, MAX_PER_PAGE);
    let response = await this.send(method, { ...params, per_page: perPage }, options);
    const items = itemsOf(response.data);
    const found = () => options.stopWhen !== undefined && items.some(options.stopWhen);
    for (let next = nextPage(response.headers.link); next && items.length < options.limit && !found(); next = nextPage(response.headers.link)) {
      const url = next;
      if (new URL(url).origin !== this.apiOrigin) throw new ToolError(`The forge's pagination link leaves ${this.apiOrigin}; not followed (it would carry the token)`);
      response = await this.send(() => this.octokit.request({ method: 'GET', url, request: this.call }) as ReturnType<Method<P, R>>, params, options);
      items.push(...itemsOf(response.data));
    }
    return { items: items.slice(0, options.limit), more: items.length > options.limit || nextPage(response.headers.link) !== undefined };
  }

  private async send<P, R>(method: Method<P, R>, params: P, options: WriteOptions): Promise<Awaited<ReturnType<Method<P, R>>>> {
    try {
      return await method({ ...params, request: this.call });
    } catch (err) {
      this.signal.throwIfAborted();
      if (!isOctokitFailure(err)) throw err;
      throw await this.failure(err, options);
    }
  }

  private get context(): FailureContext {
    return { hadToken: this.hasToken, apiOrigin: this.apiOrigin, signal: this.signal };
  }

  private async failure(failure: OctokitFailure, options: WriteOptions): Promise<unknown> {
    const status = failure.response?.status;
    if (status === 404) return this.notFound(options.subject);
    if (status === 422 && options.unprocessable) {
      const said = forgeMessage(failure);
      const parameter = options.unprocessable(said);
      if (parameter) return ToolError.invalidInput(parameter, 'a value the forge accepts', undefined, `The forge refused '${parameter}': ${said}`);
    }
    return forgeError(failure, this.context);
  }

  /**
   * GitHub answers 404 for anything missing or not visible to the token: find which input it
   * was by asking for the repository, then the owner (two reads, only on this path).
   */
  private async notFound(subject: Subject): Promise<ToolError> {
    let parameter = subject.parameter;
    if (parameter !== 'repo' && !(await this.exists(() => this.rest.repos.get({ owner: subject.owner, repo: subject.repo, request: this.call })))) parameter = 'repo';
    if (parameter === 'repo' && !(await this.exists(() => this.rest.users.getByUsername({ username: subject.owner, request: this.call })))) parameter = 'owner';
    const what: Record<string, string> = {
      owner: `Owner '${subject.owner}'`,
      repo: `Repository '${subject.owner}/${subject.repo}'`,
    };
    const named = what[parameter] ?? `${parameter} '${subject.value}' in ${subject.owner}/${subject.repo}`;
    return ToolError.invalidInput(
      parameter,
      'something that exists on the forge and the token can see',
      parameter === 'owner' ? subject.owner : parameter === 'repo' ? subject.repo : subject.value,
      `${named} was not found on the forge (a private one is not found for a token without access to it)`,
    );
  }

  /** Whether a probe finds its object; failures other than 404 are thrown as themselves. */
  private async exists(probe: () => Promise<unknown>): Promise<boolean> {
    try {
      await probe();
      return true;
    } catch (err) {
      this.signal.throwIfAborted();
      if (isOctokitFailure(err) && err.response?.status === 404) return false;
      if (isOctokitFailure(err)) throw forgeError(err, this.context);
      throw err;
    }
  }
}

/** The `rel="next"` URL of a `Link` header. */
function nextPage(link: string | number | undefined): string | undefined {
  return typeof link === 'string' ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}
