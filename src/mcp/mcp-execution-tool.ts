import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { AppException } from '../common/errors';
import { EXECUTION_STATUSES } from '../executions/engine/execution.entity';
import { executionView } from '../executions/request/execution-views';
import type { ExecutionsService } from '../executions/request/executions.service';
import type { Principal } from '../identity/principal';
import { appMetaOf } from './mcp-apps';
import { EXECUTION_STATUS_TOOL, executionIdOfUri, executionUri } from './mcp-execution-uri';
import { refusedCallResult, requireScope } from './mcp-replies';

/**
 * The MCP face of `GET /v1/executions/{id}` as a tool (docs/mcp.md#execution-status): an agent that
 * started work it does not wait on (an MCP task, a REST async invoke, a workflow run, a schedule's
 * run) shows it to its user, and a host that renders MCP Apps keeps the view live until it ends.
 * It reads, so it needs `executions:read` (not `tools:invoke`) and no tool allowlist entry.
 */
export const EXECUTION_STATUS_VIEW: McpTool = {
  name: EXECUTION_STATUS_TOOL,
  title: 'Execution status',
  description:
    'The status, progress, and result or error of an execution this key may see: one started as an MCP task, by a REST async invoke, a workflow run, a schedule or a trigger. Hosts that render MCP Apps show it live until it ends.',
  inputSchema: {
    type: 'object',
    properties: { execution_id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'The execution id (exec_…), as a task id, an async invoke or a run answers it.' } },
    required: ['execution_id'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      tool_id: { type: 'string' },
      status: { type: 'string', enum: [...EXECUTION_STATUSES] },
      progress: { type: 'number', minimum: 0, maximum: 100 },
      progress_message: { type: 'string' },
      result: { type: 'object' },
      error: { type: 'object' },
    },
    required: ['id', 'tool_id', 'status', 'progress'],
  },
  annotations: { title: 'Execution status', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  _meta: appMetaOf(EXECUTION_STATUS_TOOL),
};

/** The execution as GET /v1/executions/{id} shows it; an unknown one (or another account's) is a result the model can act on. */
export async function executionStatus(executions: ExecutionsService, principal: Principal, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
  requireScope(principal, 'executions:read');
  const id = args?.execution_id;
  if (typeof id !== 'string' || executionIdOfUri(executionUri(id)) === undefined) {
    const details = { parameter: 'execution_id', expected: 'an execution id (exec_…)' };
    return refusedCallResult(new AppException('INVALID_INPUT', 'execution_id must be an execution id (exec_…)', { details }).body);
  }
  try {
    const view = executionView(await executions.get(principal, id));
    return { structuredContent: view, content: [{ type: 'text', text: JSON.stringify(view) }] };
  } catch (err) {
    if (err instanceof AppException) return refusedCallResult(err.body);
    throw err;
  }
}
