/**
 * The build tools' part of the example world: a private Docker engine with the busybox base image
 * and image-scan's fixture image (`shop/scan-fixture:1`), and the Docker fixture projects under
 * `<workspace>/docker` (the world's WORKSPACE_ROOT).
 */
import { cpSync } from 'node:fs';
import * as path from 'node:path';
import { buildFixtureImage, DOCKER_FIXTURES, SCAN_FIXTURE, startDockerEngine } from '../docker/docker-engine';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'docker',
  async start(world) {
    cpSync(DOCKER_FIXTURES, path.join(world.dir, 'workspace', 'docker'), { recursive: true });
    const engine = await startDockerEngine();
    await buildFixtureImage(engine.docker, SCAN_FIXTURE, 'shop/scan-fixture:1').catch(async (err: Error) => {
      await engine.stop();
      throw err;
    });
    return { env: { DOCKER_HOST: engine.host }, stop: () => engine.stop() };
  },
};
