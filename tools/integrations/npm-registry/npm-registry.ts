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

  /** Licences by `name@version`; a version the registry does not know is left out. */
  async licenses(packages: Array<{ name: string; version: string }>): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const queue = [...packages];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const license = await this.license(next.name, next.version);
        if (license) found.set(`${next.name}@${next.version}`, license);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return found;
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
