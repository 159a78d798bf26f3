/**
 * The fake forge for specs: `startForge()` serves the example data on a free loopback port; the
 * spec stops it in afterAll and asserts that everything it answered fitted GitHub's description.
 */
import { EXAMPLE_BOT, EXAMPLE_TOKEN, seedExampleData, type ExampleData } from './example-data';
import { FakeForge, type FakeForgeOptions } from './server';

export { FakeForge, type Fault, type RecordedRequest } from './server';
export { EXAMPLE_BOT, EXAMPLE_MARKER, EXAMPLE_TOKEN, type ExampleData } from './example-data';

export interface StartedForge {
  forge: FakeForge;
  data: ExampleData;
  /** runTool overrides: FORGE_API_URL and the operator's FORGE_TOKEN (the example bot's). */
  config: Record<string, string>;
}

export async function startForge(options: FakeForgeOptions = {}): Promise<StartedForge> {
  const forge = await FakeForge.start({ ...options, tokens: { [EXAMPLE_TOKEN]: EXAMPLE_BOT, ...options.tokens } });
  const data = seedExampleData(forge.model);
  return { forge, data, config: { FORGE_API_URL: forge.url, FORGE_TOKEN: EXAMPLE_TOKEN } };
}

/** For afterAll: stops the forge and fails when any answer or request broke GitHub's description. */
export async function stopForge(started: StartedForge | undefined): Promise<void> {
  if (!started) return;
  await started.forge.stop();
  expect(started.forge.openapi.violations).toEqual([]);
  expect(started.forge.openapi.responses).toBeGreaterThan(0);
}
