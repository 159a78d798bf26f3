/** The MCP resource URI of an execution (a `tos://executions/{execution_id}` resource, docs/mcp.md). */
const EXECUTION = /^tos:\/\/executions\/([A-Za-z0-9_-]{1,64})$/;

export const executionUri = (executionId: string): string => `tos://executions/${executionId}`;

/** The execution a URI names, or undefined for any other value. */
export function executionIdOfUri(uri: unknown): string | undefined {
  return typeof uri === 'string' ? EXECUTION.exec(uri)?.[1] : undefined;
}

/** The tool that shows an execution (src/mcp/mcp-execution-tool.ts), whose results the execution view renders live. */
export const EXECUTION_STATUS_TOOL = 'execution.status';
