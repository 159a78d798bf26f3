import { runTool } from '../../src/tools/sdk/testing';
import { startForge, stopForge, type StartedForge } from '../../test/support/forge';
import { ForgeClients } from './forge-shared/forge-clients';
import { VcsListPrsTool } from './vcs-list-prs.tool';

describe('vcs-list-prs', () => {
  let world: StartedForge;
  const tool = new VcsListPrsTool(new ForgeClients());
  beforeAll(async () => (world = await startForge()));
  afterAll(() => stopForge(world));

  it('lists open pull requests', async () => {
    const out = await runTool(tool, { owner: 'acme', repo: 'widgets' }, { config: world.config });
    console.log(JSON.stringify(out, null, 1));
  });
});
