import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * One page of a list ordered by `key`, after the item a cursor names. Cursors are opaque to
 * clients: the key of the last item they were given.
 */
export function pageAfter<T>(items: readonly T[], key: (item: T) => string, cursor: string | undefined, size: number): { page: T[]; nextCursor?: string } {
  const after = cursor === undefined ? null : decodeCursor(cursor);
  const rest = after === null ? items : items.filter((item) => key(item) > after);
  const page = rest.slice(0, size);
  return { page, ...(rest.length > page.length && { nextCursor: encodeCursor(key(page[page.length - 1])) }) };
}

function encodeCursor(lastKey: string): string {
  return Buffer.from(lastKey).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString();
  if (cursor.length > 2048 || encodeCursor(key) !== cursor) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass nextCursor from the previous list answer');
  return key;
}
