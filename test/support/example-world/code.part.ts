/**
 * The code tools' part of the example world (dependency-check, license-check, iac-scan,
 * sbom-generate). Their examples read files, so this part fills a workspace and points the
 * service at it, and answers license-check's registry look-ups from a loopback npm registry.
 *
 * WORKSPACE_ROOT is `<world dir>/workspace`, the same path for every part that needs files: a
 * part adds its own top-level folder there (this one `code/`), so parts never overwrite each
 * other's setting. OSV_DATA_DIR is the fixture OSV records in the repository, read in place.
 * REGISTRY_URL needs no name or fixed port: the registry listens on the world address, port 0.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { startNpmRegistryFake } from '../code-tools/npm-registry';
import { buildCodeWorkspace, FIXTURE_OSV_DIR } from '../code-tools/workspace';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'code',
  async start(world) {
    const workspace = path.join(world.dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    buildCodeWorkspace(workspace);
    const registry = await startNpmRegistryFake(undefined, world.address);
    return { env: { WORKSPACE_ROOT: workspace, OSV_DATA_DIR: FIXTURE_OSV_DIR, REGISTRY_URL: registry.url }, stop: () => registry.close() };
  },
};
