/**
 * The build tools' part of the example world: a private Docker engine with the busybox base image,
 * and the Docker fixture projects under `<workspace>/docker` (the world's WORKSPACE_ROOT).
 */
import { cpSync } from 'node:fs';
import * as path from 'node:path';
import { DOCKER_FIXTURES, startDockerEngine } from '../docker/docker-engine';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'docker',
  async start(world) {
    cpSync(DOCKER_FIXTURES, path.join(world.dir, 'workspace', 'docker'), { recursive: true });
    const engine = await startDockerEngine();
    return { env: { DOCKER_HOST: engine.host }, stop: () => engine.stop() };
  },
};
