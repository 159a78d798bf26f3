/** Who this MCP server says it is, the same in every protocol revision. */
export const MCP_SERVER_INFO = { name: 'tool-orchestration-service', title: 'Tool Orchestration Service', version: '1.0.0' };

export const MCP_INSTRUCTIONS =
  'Developer-ops tools (security scans, code analysis, automation, integrations, monitoring). ' +
  'Every tools/call is recorded as an execution; its id is in the result _meta.execution_id.';
