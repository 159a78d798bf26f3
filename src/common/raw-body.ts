/**
 * The request body bytes as the parser received them (after any Content-Encoding is undone), kept
 * for signed requests (docs/API.md#signed-requests), which are checked over these bytes, not over a
 * re-serialised parse.
 */
const rawBodies = new WeakMap<object, Buffer>();

export function rememberRawBody(request: object, body: Buffer): void {
  rawBodies.set(request, body);
}

/** The bytes remembered, else a Buffer body (an archive upload), else none. */
export function rawBodyOf(request: { body?: unknown }): Buffer {
  return rawBodies.get(request) ?? (Buffer.isBuffer(request.body) ? request.body : EMPTY);
}

const EMPTY = Buffer.alloc(0);
