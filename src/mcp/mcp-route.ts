import { classifyInboundRequest, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { headerValue } from './mcp-modern-endpoint';

/** Distinct request shapes remembered, the least recently seen dropped first (clients send a handful). */
const MAX_REMEMBERED = 1_000;
/** A shape longer than this (a large `_meta`) is classified every time rather than kept. */
const MAX_SHAPE_LENGTH = 2_048;

type Legacy = Extract<InboundClassificationOutcome, { kind: 'legacy' }>;
type Modern = Extract<InboundClassificationOutcome, { kind: 'modern' }>;
/** A route as remembered: a 2026 one without the message it was found for (which is not kept). */
type Route = Legacy | Omit<Modern, 'message'>;

/**
 * The SDK v2's routing of the POST: `legacy` for 2025-era traffic (no `_meta` protocol-version
 * claim, no 2026 MCP-Protocol-Version header), else 2026-07-28 through its validation ladder.
 *
 * Its classifier tries a request as a JSON-RPC response and an error first, and the zod failures
 * that rule those out cost a tenth of a cached call's CPU. Yet for a request other than
 * `initialize` it reads nothing but the two routing headers, the top-level members and
 * `params._meta`, never the rest of the params (a call's arguments): so the route it gave one
 * such shape is the route of every request of that shape, and is remembered (by the endpoint that
 * owns this, for its lifetime). Refusals are not remembered (each is classified, and worded,
 * afresh); `mcp-route.spec.ts` holds the two equal.
 */
export class McpRoutes {
  /** Routes by shape. */
  private readonly remembered = new LRUCache<string, Route>({ max: MAX_REMEMBERED });

  routeOf(request: FastifyRequest): InboundClassificationOutcome {
    const { body } = request;
    const protocolVersionHeader = headerValue(request, 'mcp-protocol-version');
    const mcpMethodHeader = headerValue(request, 'mcp-method');
    const shape = shapeOf(body, protocolVersionHeader, mcpMethodHeader);
    const known = shape === undefined ? undefined : this.remembered.get(shape);
    if (known) return known.kind === 'modern' ? ({ ...known, message: body } as Modern) : (known as Legacy);
    const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader, mcpMethodHeader, mcpNameHeader: headerValue(request, 'mcp-name'), body });
    if (shape !== undefined && route.kind !== 'reject') {
      if (route.kind === 'modern') {
        const { message: _found, ...modern } = route;
        this.remembered.set(shape, modern);
      } else this.remembered.set(shape, route);
    }
    return route;
  }
}

/**
 * What the classifier reads of a single request other than `initialize` (whose params it reads
 * further), as a string; undefined for anything else. An id other than a string or a safe integer
 * has no shape (the classifier refuses it, and JSON would not tell 1.5 from "1.5"); nor has a
 * shape holding a null, as JSON writes Infinity (a number literal past 1e308) as null too: absent
 * headers and params are written as 0 so that an ordinary request holds none.
 */
function shapeOf(body: unknown, version: string | undefined, method: string | undefined): string | undefined {
  if (!isPlainObject(body)) return undefined;
  const { id, params } = body;
  if (typeof body.method !== 'string' || body.method === 'initialize') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (params !== undefined && !isPlainObject(params)) return undefined;
  const meta = params === undefined ? 0 : '_meta' in params ? [params._meta] : 1;
  const shape = JSON.stringify([version ?? 0, method ?? 0, Object.keys(body), body.jsonrpc, typeof id, body.method, meta]);
  return shape.includes('null') || shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
