import type { Egress, EgressSettings } from '../egress/egress';
import { createToolDns, createToolHttp, createToolNet } from '../egress/tool-network';
import type { ToolContext, ToolLogger, ToolSettingValue, Workspace } from '../sdk/context';
import { createExec } from './exec';
import { createToolSecrets, type AccountSecretSource } from './secrets';
import { sleep } from '../sdk/sleep';
import { ToolError } from '../sdk/tool-error';

export interface ToolContextParts {
  executionId: string;
  signal: AbortSignal;
  progress(percent: number, message?: string): void;
  logger: ToolLogger;
  config: Readonly<Record<string, ToolSettingValue | undefined>>;
  workspace: Workspace;
  /** The process's outbound settings (EGRESS_ALLOW, EGRESS_DNS_SERVERS, EGRESS_CA_FILE). */
  egress: EgressSettings;
  /** The calling account (null for service-internal runs). */
  accountId: string | null;
  accountSecrets?: AccountSecretSource;
  /** Set when the call's caller can be asked (a sync call on a door that carries questions). */
  requestInput?: ToolContext['requestInput'];
  canAsk?: ToolContext['canAsk'];
}

/**
 * The one place a ToolContext is made, for the runner, a worker thread and the test kit: plain
 * values (a thread gets them by message) and the Egress for `parts.egress` from the caller's pool.
 */
export function createToolContext(parts: ToolContextParts, egress: Egress): ToolContext {
  return {
    executionId: parts.executionId,
    signal: parts.signal,
    sleep: (ms) => sleep(ms, parts.signal),
    progress: parts.progress,
    logger: parts.logger,
    config: parts.config,
    workspace: parts.workspace,
    http: createToolHttp(egress, parts.signal),
    net: createToolNet(egress, parts.signal),
    dns: createToolDns(egress),
    exec: createExec(parts.workspace, parts.signal),
    secrets: createToolSecrets(parts.config, parts.accountId, parts.accountSecrets),
    requestInput: parts.requestInput ?? cannotAsk,
    canAsk: parts.canAsk ?? (() => false),
  };
}

async function cannotAsk(): Promise<never> {
  throw new ToolError(
    'This tool asks its caller for input, which this call cannot carry (an MCP 2025 call, or an async call holding secret inputs, which the service does not keep for the run after the answer): invoke it over REST or MCP 2026-07-28',
    { code: 'INVALID_INPUT' },
  );
}
