import type Docker from 'dockerode';
import { Tool, ToolError, workspaceInputs, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { buildContext } from './build-context';
import { followBuild, pushImage } from './engine-streams';
import { checkBuildEgress, checkRegistry, DockerClients, DOCKER_SETTINGS, engineCall } from '../../integrations/docker';

type ContainerBuildInput = ToolInput<typeof definition>;
type ContainerBuildOutput = ToolOutput<typeof definition>;

/** Of the build's progress, the share left for the push. */
const PUSH_SHARE = 20;
/** A repository name as Docker takes it: an optional registry host[:port], then lower-case path components. */
const IMAGE_PATTERN = '^([a-zA-Z0-9.-]+(:[0-9]{1,5})?/)?[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$';

const definition = defineTool({
  id: 'container-build',
  name: 'Container Build',
  category: 'automation',
  description:
    "Builds a container image from a Dockerfile and its context folder in the workspace with the Docker engine at DOCKER_HOST (classic builder; RUN steps get no network), tags it image:tag, and optionally pushes it to the image's registry with the account's REGISTRY_USERNAME / REGISTRY_PASSWORD secrets when that registry is the one saved with them as REGISTRY_URL (never to another). Every registry the engine would pull from or push to, and every ADD URL, must pass the egress policy before the engine is asked. Reports progress step by step; returns the image id, size, layer count, the steps run, and the pushed digest. Cancelling stops the build on the engine.",
  version: '1.0.0',
  effects: 'write',
  open_world: true,
  timeout: 300,
  task_support: 'optional',
  rate_limit: 10,
  config: DOCKER_SETTINGS,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      context: { type: 'string', default: '.', maxLength: 1024, description: 'The build context: a folder of the workspace.' },
      dockerfile: { type: 'string', default: 'Dockerfile', maxLength: 255, pattern: '^[^/].*$', description: 'The Dockerfile, relative to the context folder.' },
      image: { type: 'string', maxLength: 255, pattern: IMAGE_PATTERN, description: 'Repository to tag (and push): name, or registry-host[:port]/name.' },
      tag: { type: 'string', default: 'latest', maxLength: 128, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$', description: 'The tag.' },
      build_args: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 4096 }, description: 'ARG values for the build, by ARG name.' },
      target: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', description: 'The stage of a multi-stage Dockerfile to build.' },
      labels: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 4096 }, description: 'Labels added to the image.' },
      platform: { type: 'string', enum: ['linux/amd64', 'linux/arm64'], description: "Target platform (the engine's own when omitted; another needs its emulation installed)." },
      no_cache: { type: 'boolean', default: false, description: 'Build every step again instead of reusing cached layers.' },
      push: { type: 'boolean', default: false, description: "Push image:tag to the image's registry after the build." },
    },
    required: ['image'],
  },
  output: {
    type: 'object',
    properties: {
      image: { type: 'string', description: 'The full reference built: image:tag.' },
      image_id: { type: 'string', description: 'The image id (sha256:…).' },
      size_bytes: { type: 'integer', description: 'Size of the image.' },
      layers: { type: 'integer', description: 'Number of filesystem layers.' },
      steps: { type: 'array', items: { type: 'string' }, description: 'The Dockerfile steps run, as the engine printed them.' },
      context_files: { type: 'integer', description: 'Files sent as the build context (after .dockerignore).' },
      duration_ms: { type: 'integer', description: 'Time the build (and push) took.' },
      pushed: { type: 'boolean', description: 'Whether the image was pushed.' },
      digest: { type: ['string', 'null'], description: 'The registry digest of the pushed manifest (sha256:…), null when not pushed.' },
    },
    required: ['image', 'image_id', 'size_bytes', 'layers', 'steps', 'context_files', 'duration_ms', 'pushed', 'digest'],
  },
  examples: [
    {
      name: 'Build an image from the example project',
      input: { context: 'docker/hello', image: 'shop/hello', tag: '1.0.0' },
      output: {
        image: 'shop/hello:1.0.0',
        image_id: 'sha256:3f1c0e5ba9a0d1f62a4c45e2a4c1b0f1a6dd2d58f1f6a1a62f6f3f59b8e4a0c1',
        size_bytes: 2_000_000,
        layers: 2,
        steps: ['Step 1/3 : FROM busybox:local', 'Step 2/3 : COPY greeting.txt /greeting.txt', 'Step 3/3 : LABEL org.opencontainers.image.title=hello'],
        context_files: 3,
        duration_ms: 500,
        pushed: false,
        digest: null,
      },
      varies: ['image_id', 'size_bytes', 'duration_ms'],
    },
  ],
});

@Tool(definition)
export class ContainerBuildTool implements ToolHandler<typeof definition> {
  constructor(private readonly engines: DockerClients) {}

  async execute(input: ContainerBuildInput, ctx: ToolContext<typeof definition>): Promise<ContainerBuildOutput> {
    const started = Date.now();
    const reference = `${input.image}:${input.tag}`;
    // The push's registry first: a refused one should cost no build.
    const registry = input.push ? await checkRegistry(ctx, input.image, 'image') : null;
    const context = await buildContext(ctx, input.context, input.dockerfile);
    const docker = await this.engines.connect(ctx);
    await checkBuildEgress(ctx, docker, context.dockerfile, { buildArgs: input.build_args, platform: input.platform });
    const buildShare = input.push ? 100 - PUSH_SHARE : 100;
    const build = await engineCall(() =>
      docker.buildImage(context.tar as never, {
        t: reference,
        dockerfile: input.dockerfile,
        buildargs: input.build_args,
        target: input.target,
        labels: input.labels,
        platform: input.platform,
        nocache: input.no_cache,
        networkmode: 'none',
        rm: true,
        forcerm: true,
        version: '1',
        abortSignal: ctx.signal,
      } as Docker.ImageBuildOptions),
    );
    const { steps, imageId } = await followBuild(docker, build, ctx, (step, total) => ctx.progress((step / total) * buildShare, `step ${step}/${total}`));
    const image = await engineCall(() => docker.getImage(imageId).inspect());
    const digest = registry ? await pushImage(docker, input.image, input.tag, registry, ctx, (percent) => ctx.progress(buildShare + (percent * PUSH_SHARE) / 100, 'pushing')) : null;
    return {
      image: reference,
      image_id: image.Id,
      size_bytes: image.Size,
      layers: image.RootFS?.Layers?.length ?? 0,
      steps,
      context_files: context.files,
      duration_ms: Date.now() - started,
      pushed: input.push,
      digest,
    };
  }
}
