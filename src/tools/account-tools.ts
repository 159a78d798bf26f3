import type { Principal } from '../identity/principal';
import type { RegisteredTool } from './tool-catalogue';

/** A tool an account adds to its own catalogue, in the views GET /v1/tools shows. */
export interface AccountTool {
  id: string;
  name: string;
  description: string;
  summary: Record<string, unknown>;
  compact: Record<string, unknown>;
  detail: Record<string, unknown>;
  /** Set for a tool that runs as a built-in one does (an upstream server's, docs/upstreams.md): validated, admitted and run as an execution. */
  runnable?: RegisteredTool;
}

/**
 * The tools an account adds to the catalogue (its published workflows, docs/workflows.md#publishing,
 * and its upstream servers' tools, docs/upstreams.md), listed beside the built-in ones for that account alone. Provided by a module above this one;
 * absent, the catalogue is the built-in tools only.
 */
export abstract class AccountTools {
  /** The account's own tools that `principal` may use, by id. */
  abstract of(principal: Principal): Promise<AccountTool[]>;

  /**
   * Calls the account's tool `toolId` as POST /v1/tools/{id}/invoke does (the request's body and
   * query as they came): its HTTP status and body, or undefined when the account has no such tool.
   */
  abstract invoke(principal: Principal, toolId: string, body: unknown, query: { async?: string; timeout?: string }, requestId: string): Promise<{ status: number; body: Record<string, unknown> } | undefined>;

  /** The account's tool `toolId` when it runs as a built-in one does (an upstream's), else undefined. */
  abstract runnable(principal: Principal, toolId: string): Promise<RegisteredTool | undefined>;
}
