/** The `tos` command tree: built here, run by main.ts, walked by completion and by the help tests. */
import { Command } from 'commander';
import { registerAdvisoryCommands } from './advisories/commands';
import { EXIT } from './client/api-client';
import { registerClientCommands } from './client/commands';
import { registerClientKeyCommands } from './client/account-commands';
import { registerOrchestrationCommands } from './client/orchestration-commands';
import { registerUpstreamCommands } from './client/upstream-commands';
import { registerWebhookCommands } from './client/webhook-commands';
import { registerWorkflowCommands } from './client/workflow-commands';
import { registerCompletion } from './completion';
import { registerOperatorCommands } from './operator-commands';
import { SERVICE_VERSION } from '../common/service-version';

export function buildProgram(): Command {
  const program = new Command('tos')
    .description(
      'Tool Orchestration Service CLI. Client commands talk to a running service (tos login, or TOS_URL and TOS_API_KEY); operator commands (accounts, console, --account) manage any account (DATA_DIR or DATABASE_URL).',
    )
    .version(SERVICE_VERSION, '-V, --version', 'print the version')
    .showSuggestionAfterError();
  // Usage errors exit 2, apart from the codes client commands use for outcomes (docs/cli.md).
  program.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.usage));
  const keys = registerOperatorCommands(program);
  registerClientCommands(program);
  registerClientKeyCommands(keys);
  registerWebhookCommands(program);
  registerUpstreamCommands(program);
  registerWorkflowCommands(program);
  registerOrchestrationCommands(program);
  registerAdvisoryCommands(program);
  registerCompletion(program);
  return program;
}
