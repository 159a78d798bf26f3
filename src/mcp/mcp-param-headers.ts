/**
 * SEP-2243 (2026-07-28 Streamable HTTP): a tool input declared with `mcp_header` is published as
 * `x-mcp-header` and mirrored by clients into an `Mcp-Param-{Name}` header, so gateways can route
 * or police on it without reading bodies. The server must then hold the two to agreement: a value
 * in the body needs its header, decoding to the same value.
 */

/** One input a tool mirrors into a header. */
export interface ParamHeader {
  input: string;
  /** The name after `Mcp-Param-`. */
  header: string;
  type: string;
}

/** Why the headers and the body disagree, as -32020's `data.mismatch`. */
export interface ParamHeaderMismatch {
  header: string;
  body: string;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CANONICAL_DECIMAL = /^-?\d+(\.\d+)?$/;

/** The first disagreement between the call's arguments and its `Mcp-Param-*` headers, if any. */
export function paramHeaderMismatch(
  declared: readonly ParamHeader[],
  args: Record<string, unknown> | undefined,
  headerOf: (lowercaseName: string) => string | undefined,
): ParamHeaderMismatch | undefined {
  for (const { input, header, type } of declared) {
    const name = `Mcp-Param-${header}`;
    const value = args?.[input];
    const text = asText(value);
    // Absent, null or not a header-able value: nothing to mirror, and a header sent anyway is ignored.
    if (text === undefined) continue;
    const sent = headerOf(name.toLowerCase());
    if (sent === undefined) return { header: name, body: `the body carries ${input}=${JSON.stringify(value)} but the ${name} header is absent` };
    const decoded = decode(sent.trim());
    if (decoded === undefined) return { header: name, body: `the ${name} header carries an invalid Base64 value` };
    const numeric = (type === 'integer' || type === 'number') && typeof value === 'number' && CANONICAL_DECIMAL.test(decoded);
    if (numeric ? Number(decoded) !== value : decoded !== text) {
      return { header: name, body: `the ${name} header decodes to ${JSON.stringify(decoded)} but the body carries ${input}=${JSON.stringify(value)}` };
    }
  }
  return undefined;
}

/** A primitive as the header carries it; undefined for anything a client would not mirror. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/** `=?base64?…?=` decoded as UTF-8 (undefined when not canonical Base64 or not UTF-8); any other value is literal. */
function decode(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX) && value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length)) return value;
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64_CANONICAL.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}
