/**
 * The forge of the vcs-* examples: the fake forge (test/support/forge) shaped like a GitHub
 * Enterprise Server at https://forge.example.test:9243/api/v3 (a leaf of the world's CA), seeded
 * with the example data; FORGE_API_URL and the operator's FORGE_TOKEN point the tools at it.
 * Like an Enterprise Server it answers a dispatch with 204 and the run appears a moment later,
 * so the vcs-workflow example finds its run by polling.
 */
import { EXAMPLE_BOT, EXAMPLE_TOKEN, seedExampleData } from '../forge/example-data';
import { FakeForge } from '../forge/server';
import type { WorldPart } from './world';

export const FORGE_HOST = 'forge.example.test';
export const FORGE_PORT = 9243;
/** How long a dispatched run takes to appear (GitHub: a few seconds). */
const RUN_CREATION_DELAY_MS = 1500;

export const part: WorldPart = {
  name: 'forge',
  async start(world) {
    const forge = await FakeForge.start({
      host: world.address,
      port: FORGE_PORT,
      pathPrefix: '/api/v3',
      tls: world.issueCertificate([FORGE_HOST], { days: 30 }),
      tokens: { [EXAMPLE_TOKEN]: EXAMPLE_BOT },
      // The specs hold the fake to GitHub's description; the world only serves the examples.
      checkOpenApi: false,
      dispatchReturnsRunDetails: false,
      runCreationDelayMs: RUN_CREATION_DELAY_MS,
    });
    seedExampleData(forge.model);
    return {
      env: { FORGE_API_URL: `https://${FORGE_HOST}:${FORGE_PORT}/api/v3`, FORGE_TOKEN: EXAMPLE_TOKEN },
      stop: () => forge.stop(),
    };
  },
};
