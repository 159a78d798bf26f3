/**
 * The licence an npm registry publishes for a package version: `GET <registry>/<name>/<version>`
 * (the version manifest), read like a package.json. Through ctx.http, a few requests at a time.
 */
import { ToolError, type ToolHttp } from '@tos/sdk';
import { declaredLicense } from '../../shared/licenses/installed';

const CONCURRENCY = 8;
const TIMEOUT_MS = 15_000;
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export class NpmRegistryLicenses {
  constructor(
    private readonly http: ToolHttp,
    private readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly parameter = 'REGISTRY_URL',
  ) {}

  /**
   * Licences by `name@version`; a version the registry does not know is left out. A registry that
   * cannot be reached (no connection, a timeout) stops the asking: `unreachable` says why, and what
   * was found before stays. An HTTP error status still fails the call.
   */
  async licenses(packages: Array<{ name: string; version: string }>): Promise<{ licenses: Map<string, string>; unreachable?: ToolError }> {
    const found = new Map<string, string>();
    const queue = [...packages];
    let unreachable: ToolError | undefined;
    const worker = async () => {
      for (let next = queue.shift(); next && !unreachable; next = queue.shift()) {
        try {
          const license = await this.license(next.name, next.version);
          if (license) found.set(`${next.name}@${next.version}`, license);
        } catch (error) {
          if (!isUnreachable(error)) throw error;
          unreachable ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return { licenses: found, unreachable };
  }

  private async license(name: string, version: string): Promise<string | undefined> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}/${name.replace('/', '%2F')}/${encodeURIComponent(version)}`;
    const response = await this.http.request(url, {
      headers: { accept: 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: MAX_MANIFEST_BYTES,
      parameter: this.parameter,
    });
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw ToolError.fromResponse('npm-registry', response, `The npm registry answered HTTP ${response.status} for ${name}@${version}`);
    return declaredLicense(response.json<Record<string, unknown>>());
  }
}

/** A failed connection as ctx.http reports it: a retryable TOOL_ERROR with no upstream status (a cancel or an egress refusal is not one). */
function isUnreachable(error: unknown): error is ToolError {
  return error instanceof ToolError && error.code === 'TOOL_ERROR' && error.retryable && error.details?.upstream === undefined;
}
