import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import type { ErrorBody } from '../common/errors';
import { dependencyUnavailable, OutageLog, unreachableDependency } from '../common/outages';
import type { Execution } from '../executions/engine/execution.entity';
import { credentialName, type Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import type { RegisteredTool } from '../tools/tool-catalogue';

/** What a request handler knows of the HTTP request it serves. */
export interface RequestFacts {
  requestId: string;
  /** The request's logger: an unexpected error is logged there, not sent to the client. */
  log: { error(details: object, message: string): void };
  /** Where an outage is reported: one log line per change of state, shared with REST. */
  outages: OutageLog;
}

export function factsOf(request: Pick<FastifyRequest, 'id' | 'log'>, outages: OutageLog): RequestFacts {
  return { requestId: request.id, log: request.log, outages };
}

/**
 * A tool call's CallToolResult, from its execution and the answer REST would give:
 * a success carries the output as structured content, its content blocks (the output as JSON
 * text, or the blocks the tool declared as its MCP content) and the rest of the answer as
 * `_meta`; an error is an error result holding the answer, which the model can act on.
 */
export function toolCallResult({ definition }: Pick<RegisteredTool, 'definition'>, execution: Pick<Execution, 'id' | 'status' | 'result'>, answer: Record<string, unknown>): CallToolResult {
  if (execution.status !== 'success') return { isError: true, content: [jsonText(answer)], _meta: { execution_id: execution.id } };
  const { result, ...about } = answer;
  const output = execution.result!;
  const member = definition.mcp?.content;
  return { structuredContent: output, content: member ? (output[member] as CallToolResult['content']) : [jsonText(output)], _meta: about };
}

/** A call refused before it ran (limits, invalid arguments): an error result the model can act on. */
export function refusedCallResult(error: ErrorBody): CallToolResult {
  return { isError: true, content: [jsonText({ error })] };
}

/** The SDK would send an unexpected error's own message to the client, and it may name internals: log it, answer generically. */
export function hideUnexpected(err: unknown, method: string, facts: RequestFacts): never {
  if (err instanceof McpError) throw err;
  const dependency = unreachableDependency(err);
  // An outage is no bug: its retryable envelope, without a stack per request.
  if (dependency) {
    facts.outages.report(dependency, err);
    const outage = dependencyUnavailable(dependency);
    throw new McpError(ErrorCode.InternalError, outage.message, { error: outage.body });
  }
  facts.log.error({ err }, `unexpected error in MCP ${method}`);
  throw new McpError(ErrorCode.InternalError, `An unexpected error occurred. Retry later; if it persists, contact support with request id ${facts.requestId}.`);
}

/** Our JSON-RPC error for a batch message the key's request window could not hold; `data` is the RATE_LIMITED envelope (retry_after). */
export const RATE_LIMITED = -32029;

/** JSON-RPC error of 2026-07-28 for request headers that disagree with its body. */
export const HEADER_MISMATCH = -32020;

/** JSON-RPC error of 2026-07-28 for a request that needs a client capability the request did not declare. */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** The refusal naming what the client lacks, in the shape of its capabilities (`{ elicitation: {} }`, `{ extensions: {…} }`). */
export function missingCapability(what: string, requiredCapabilities: Record<string, unknown>): McpError {
  return new McpError(MISSING_REQUIRED_CLIENT_CAPABILITY, `Missing required client capability: ${what}`, { requiredCapabilities });
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw new McpError(ErrorCode.InvalidRequest, `This ${credentialName(principal)} lacks the '${scope}' scope`);
}

function jsonText(value: unknown): { type: 'text'; text: string } {
  return { type: 'text', text: JSON.stringify(value) };
}
