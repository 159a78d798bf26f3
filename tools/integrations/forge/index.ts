/**
 * The forge (GitHub REST API) integration: the FORGE_API_URL / FORGE_TOKEN settings, one client
 * per forge and token (ForgeModule), the inputs every forge tool shares, and the reading of pull
 * requests and workflow runs into the tools' outputs.
 */
export type { ForgeClient, Subject } from './forge-client';
export { ForgeClients } from './forge-clients';
export { FORGE_READ_CACHE_TTL, FORGE_SETTINGS, OWNER_INPUT, PULL_NUMBER_INPUT, REF_PATTERN, REPO_INPUT, WORKFLOW_INPUT } from './forge-definitions';
export { ForgeModule } from './forge.module';
export { checksState, summarizeReviews } from './pull-request-verdicts';
export { loginOf, utc, utcOrNull } from './values';
export { RUN_SCHEMA, runSummary, type WorkflowRun } from './workflow-runs';
