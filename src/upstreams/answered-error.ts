/**
 * A JSON-RPC error the upstream answered (the SDK's ProtocolError, known by its brand so the SDK
 * is not loaded to check): the call reached it and was refused, so trying again will not help.
 */
export function answeredWithError(err: unknown): err is Error & { code: number } {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && (err.constructor as { mcpBrand?: unknown }).mcpBrand === 'mcp.ProtocolError';
}
