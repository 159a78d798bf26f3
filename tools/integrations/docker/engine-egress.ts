/**
 * The connections the Docker engine makes for a build tool — pulls of base images (`FROM`,
 * `COPY --from=<image>`), `ADD <url>` downloads and pushes — leave from the engine, not through
 * ctx.http, so the egress policy never sees them. Each host the engine would contact is checked
 * here first, resolved through ctx.net (the policy's own check, on the resolved address), and a
 * refused one ends the call before the engine is asked anything that connects.
 */
import type Docker from 'dockerode';
import type { Arg, Copy, From, Instruction } from 'dockerfile-ast';
import { ToolError, type ToolContext } from '@tos/sdk';

/** The host Docker Hub's images are pulled from and pushed to. */
const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_ALIASES = new Set([DOCKER_HUB, 'index.docker.io', 'registry-1.docker.io']);

/**
 * The registry of an image reference as Docker reads it: the first path component when it looks
 * like a host (a dot, a port, or `localhost`), else Docker Hub. Lower-cased, `host[:port]`.
 */
export function registryOf(image: string): string {
  const first = image.split('/')[0];
  const named = image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return named ? canonicalRegistry(first) : DOCKER_HUB;
}

/** `https://Registry.Example.com:443/v2/` or `registry.example.com` → `registry.example.com`; Hub's names → docker.io. */
export function canonicalRegistry(registry: string): string {
  const bare = registry.trim().toLowerCase().replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
  const host = bare.replace(/:443$/, '');
  return DOCKER_HUB_ALIASES.has(host) ? DOCKER_HUB : host;
}

/** Checks the registry `image` is pushed to or pulled from against the egress policy. */
export async function checkRegistry(ctx: ToolContext, image: string, parameter: string): Promise<string> {
  const registry = registryOf(image);
  // Docker Hub is reached at registry-1.docker.io (its auth at auth.docker.io, also public).
  const host = registry === DOCKER_HUB ? 'registry-1.docker.io' : hostOf(registry);
  await ctx.net.resolve(host, { parameter });
  return registry;
}

export interface BuildEgressOptions {
  buildArgs?: Record<string, string>;
  /** The build's platform: a held image of another platform is pulled again (as for a FROM's own --platform). */
  platform?: string;
}

/**
 * Checks every connection a classic build of `dockerfile` would have the engine make: base images
 * the engine does not hold (of the build's platform) are pulled from their registry, and `ADD`
 * fetches its URLs. Variables are expanded as the builder does, with the build args.
 */
export async function checkBuildEgress(ctx: ToolContext, docker: Docker, dockerfile: string, options: BuildEgressOptions): Promise<void> {
  // The parser loads on the first build, not with the catalogue.
  const { DockerfileParser } = await import('dockerfile-ast');
  const parsed = DockerfileParser.parse(dockerfile);
  const instructions = parsed.getInstructions();
  const buildArgs = options.buildArgs ?? {};
  // FROM sees the ARGs declared before the first FROM; other instructions may see any ARG or ENV
  // of their stage, so they are expanded with every value the file or the caller gives.
  const globals = new Map<string, string>();
  const everything = new Map<string, string>();
  let beforeFirstFrom = true;
  for (const instruction of instructions) {
    const keyword = instruction.getKeyword().toUpperCase();
    if (keyword === 'FROM') beforeFirstFrom = false;
    if (keyword !== 'ARG' && keyword !== 'ENV') continue;
    for (const property of (instruction as Instruction & { getProperties(): ReturnType<Arg['getProperties']> }).getProperties()) {
      const name = property.getName();
      const value = keyword === 'ARG' && Object.hasOwn(buildArgs, name) ? buildArgs[name] : (property.getValue() ?? '');
      if (beforeFirstFrom && keyword === 'ARG') globals.set(name, value);
      everything.set(name, value);
    }
  }
  for (const [name, value] of Object.entries(buildArgs)) if (!everything.has(name)) everything.set(name, value);

  const stages = new Set<string>();
  // image → the platforms it is wanted for (a FROM's own --platform wins over the build's).
  const images = new Map<string, Set<string | undefined>>();
  const want = (image: string, platform: string | undefined) => images.set(image, (images.get(image) ?? new Set()).add(platform));
  const urls = new Set<string>();
  for (const instruction of instructions) {
    const keyword = instruction.getKeyword().toUpperCase();
    if (keyword === 'FROM') {
      const from = instruction as From;
      const image = expand(from.getImage() ?? '', globals);
      const platform = from.getPlatformFlag()?.getValue();
      if (image && image.toLowerCase() !== 'scratch' && !stages.has(image.toLowerCase())) want(image, platform ? expand(platform, globals) : options.platform);
      const alias = from.getBuildStage();
      if (alias) stages.add(alias.toLowerCase());
    } else if (keyword === 'COPY') {
      const source = (instruction as Copy).getFromFlag()?.getValue();
      const image = source ? expand(source, everything) : '';
      if (image && !/^\d+$/.test(image) && !stages.has(image.toLowerCase())) want(image, options.platform);
    } else if (keyword === 'ADD') {
      const sources = instruction.getArguments().map((argument) => expand(argument.getValue(), everything)).filter((value) => !value.startsWith('--')).slice(0, -1);
      for (const source of sources) if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^git@/i.test(source)) urls.add(source);
    }
  }
  for (const [image, platforms] of images) {
    for (const platform of platforms) if (!(await held(docker, image, platform))) await checkRegistry(ctx, image, 'dockerfile');
  }
  for (const url of urls) await ctx.net.resolve(urlHost(url), { parameter: 'dockerfile' });
}

/** Whether the engine holds `image` for `platform` (then the classic builder pulls nothing). */
async function held(docker: Docker, image: string, platform: string | undefined): Promise<boolean> {
  try {
    const inspected = await docker.getImage(image).inspect();
    return !platform || `${inspected.Os}/${inspected.Architecture}` === platform;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw new ToolError(`The Docker engine did not say whether it holds ${image}: ${(err as Error).message}`, { retryable: true, details: { upstream: { service: 'docker' } } });
  }
}

/** `$NAME`, `${NAME}`, `${NAME:-word}`, `${NAME:+word}` as the classic builder expands them (unset = empty). */
function expand(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(/\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced?: string, operator?: string, word?: string, plain?: string) => {
    if (match === '\\$') return '$';
    const value = values.get((braced ?? plain)!);
    if (operator === '-') return value ? value : (word ?? '');
    if (operator === '+') return value ? (word ?? '') : '';
    return value ?? '';
  });
}

/** The host of `host[:port]` (`[v6]:port` keeps its brackets, which the resolver takes). */
function hostOf(registry: string): string {
  return registry.replace(/:\d+$/, '');
}

/** The host an `ADD` source names: a URL's, or an scp-like git address's (`git@host:path`). */
function urlHost(source: string): string {
  const scp = /^[^@/]+@([^:/]+):/.exec(source);
  if (scp) return scp[1];
  try {
    return new URL(source).hostname;
  } catch {
    throw ToolError.invalidInput('dockerfile', 'ADD sources that are files of the context or valid URLs', source);
  }
}
