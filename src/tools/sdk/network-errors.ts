/**
 * How a failed outbound connection reads to the caller. The service's egress policy refuses a
 * destination with EgressRefusedError (src/tools/egress); these turn that, and any other network
 * failure, into the ToolError the call answers, for ctx.http, ctx.net and tools' own clients alike.
 */
import { channel } from 'node:diagnostics_channel';
import { ToolError } from './tool-error';

/**
 * `{ parameter?: string }` per outbound call refused by the egress policy, which the service's
 * metrics count: a probe like those of src/common/probes.ts, declared here because this is where a
 * refusal becomes the caller's error and the SDK imports nothing of the service.
 */
export const egressRefusals = channel('tos:egress.refused');

/** A refused destination; the SDK turns it into INVALID_INPUT naming the tool's parameter. */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'EGRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly label: string,
  ) {
    super(`Outbound connection to ${host}${host === address ? '' : ` (${address})`} refused: ${label} address`);
  }
}

/** The INVALID_INPUT a refused destination becomes, naming the input it came from. */
export function egressRefusal(err: EgressRefusedError, parameter: string): ToolError {
  if (egressRefusals.hasSubscribers) egressRefusals.publish({ parameter });
  return new ToolError(`Parameter '${parameter}' names a ${err.label} address (${err.address}), which tools may not reach`, {
    code: 'INVALID_INPUT',
    details: { parameter, expected: 'a public address', received: err.host },
    suggestion: 'Use a public host, or ask the operator to add it to EGRESS_ALLOW (hosts, *.suffix patterns or CIDRs)',
  });
}

/**
 * A ToolError for a failed connection: refusals are the caller's fault, the rest retryable; a
 * cancelled call answers its abort reason. Tools call it for clients that open connections through
 * ctx.http's agents (their errors are theirs, not ctx.http's); ctx.http and ctx.net call it too.
 */
export function networkError(err: unknown, target: string, parameter: string, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  const refusal = findRefusal(err);
  if (refusal) return egressRefusal(refusal, parameter);
  if (err instanceof ToolError) return err;
  const code = (err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  const timeout = code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT' || (err as Error)?.name === 'TimeoutError';
  return new ToolError(`Could not reach ${target}: ${timeout ? 'timed out' : (code ?? 'connection failed')}`, {
    retryable: true,
    details: { target, ...(code && { error: code }) },
  });
}

/** The refusal behind an error, through `cause` chains and the `original` that client libraries (Slack's) wrap. */
export function findRefusal(err: unknown): EgressRefusedError | null {
  for (let current = err, depth = 0; current && depth < 6; depth++) {
    if (current instanceof EgressRefusedError) return current;
    const next = current as { cause?: unknown; original?: unknown };
    current = next.original ?? next.cause;
  }
  return null;
}

