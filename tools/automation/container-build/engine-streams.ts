/** The engine's JSON-lines answers to a build and a push, read to their end. */
import type Docker from 'dockerode';
import { ToolError, type ToolContext } from '@tos/sdk';
import { canonicalRegistry } from '../../integrations/docker';

interface EngineEvent {
  stream?: string;
  status?: string;
  progressDetail?: { current?: number; total?: number };
  aux?: { ID?: string; Digest?: string };
  error?: string;
  errorDetail?: { message?: string };
}

const STEP = /^Step (\d+)\/(\d+) : (.*)$/;

/** Every event of `stream`, then its end; a failure of the stream itself rejects. */
function follow(docker: Docker, stream: NodeJS.ReadableStream, ctx: ToolContext, onEvent: (event: EngineEvent) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (ctx.signal.aborted ? reject(ctx.signal.reason) : err ? reject(err) : resolve()), onEvent);
  });
}

/** The steps the build ran and the image it made; a failed step is the caller's Dockerfile or context at fault. */
export async function followBuild(docker: Docker, stream: NodeJS.ReadableStream, ctx: ToolContext, onStep: (step: number, total: number) => void): Promise<{ steps: string[]; imageId: string }> {
  const steps: string[] = [];
  let imageId: string | undefined;
  let failure: string | undefined;
  await follow(docker, stream, ctx, (event) => {
    if (event.error) failure ??= event.errorDetail?.message ?? event.error;
    if (event.aux?.ID) imageId = event.aux.ID;
    for (const line of (event.stream ?? '').split('\n')) {
      const step = STEP.exec(line.trim());
      if (!step) continue;
      steps.push(line.trim());
      onStep(Number(step[1]), Number(step[2]));
    }
  }).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    throw new ToolError(`The build stream from the Docker engine broke off: ${(err as Error).message}`, { retryable: true, details: { upstream: { service: 'docker' } } });
  });
  if (failure) {
    throw new ToolError(`The build failed${steps.length ? ` at ${steps[steps.length - 1]}` : ''}: ${failure.trim()}`, { code: 'INVALID_INPUT', details: { parameter: 'dockerfile', steps } });
  }
  if (!imageId) throw new ToolError('The Docker engine ended the build without naming an image', { retryable: true });
  return { steps, imageId };
}

/**
 * Pushes image:tag to `registry` (checked against the egress policy by the caller); the manifest
 * digest. The account's REGISTRY_USERNAME / REGISTRY_PASSWORD go only to the registry saved with
 * them as REGISTRY_URL: a push elsewhere goes without them, so a caller cannot send them to a
 * host of its choosing.
 */
export async function pushImage(docker: Docker, image: string, tag: string, registry: string, ctx: ToolContext, onPercent: (percent: number) => void): Promise<string> {
  const credentials = await registryCredentials(ctx, registry);
  const authconfig = { username: credentials?.username ?? '', password: credentials?.password ?? '', serveraddress: registry };
  // dockerode sends an auth header only when given an authconfig, and the engine wants one.
  const stream = await docker.getImage(image).push({ tag, authconfig, abortSignal: ctx.signal } as Docker.ImagePushOptions);
  const layers = new Map<string, number>();
  let digest: string | undefined;
  let failure: string | undefined;
  await follow(docker, stream, ctx, (event) => {
    if (event.error) failure ??= event.errorDetail?.message ?? event.error;
    if (event.aux?.Digest) digest = event.aux.Digest;
    const { current, total } = event.progressDetail ?? {};
    if (event.status === 'Pushing' && current !== undefined && total) {
      layers.set(String((event as { id?: string }).id), current / total);
      onPercent((100 * [...layers.values()].reduce((a, b) => a + b, 0)) / layers.size);
    }
  });
  if (failure) {
    const unsent = credentials === null ? ` (${await unsentCredentials(ctx, registry)})` : '';
    throw new ToolError(`The push to ${registry} failed: ${failure}${unsent}`, { retryable: /connection refused|timeout|unavailable|5\d\d/i.test(failure), details: { upstream: { service: 'registry' } } });
  }
  if (!digest) throw new ToolError(`The push to ${registry} ended without a manifest digest`, { retryable: true });
  return digest;
}

/** The account's registry credentials when they were saved for `registry`, else null. */
async function registryCredentials(ctx: ToolContext, registry: string): Promise<{ username: string; password: string } | null> {
  const saved = await ctx.secrets.find('REGISTRY_URL');
  if (saved === undefined || canonicalRegistry(saved) !== registry) return null;
  return { username: (await ctx.secrets.find('REGISTRY_USERNAME')) ?? '', password: (await ctx.secrets.find('REGISTRY_PASSWORD')) ?? '' };
}

/** Why no credentials went with a failed push, when the account has some: they belong to another registry, or to none. */
async function unsentCredentials(ctx: ToolContext, registry: string): Promise<string> {
  if ((await ctx.secrets.find('REGISTRY_USERNAME')) === undefined && (await ctx.secrets.find('REGISTRY_PASSWORD')) === undefined) return 'no registry credentials are saved';
  const saved = await ctx.secrets.find('REGISTRY_URL');
  return saved === undefined
    ? 'REGISTRY_USERNAME / REGISTRY_PASSWORD were not sent: save the registry they belong to as the secret REGISTRY_URL'
    : `REGISTRY_USERNAME / REGISTRY_PASSWORD belong to ${canonicalRegistry(saved)} (REGISTRY_URL) and were not sent to ${registry}`;
}
