/**
 * Lists as the GitHub CLI reads them: `--limit N` is how many items to show (fetched in as many
 * pages as that takes), `--paginate` fetches them all. The API pages two ways and both are read:
 * cursors (`{ items, pagination: { after, has_more } }`, asked for with `after=`) and offsets
 * (`{ <member>, total, limit, offset }`).
 */
import type { ApiClient } from './api-client';

export interface ListOptions {
  limit?: number;
  paginate?: boolean;
}

export interface Listed {
  items: Record<string, unknown>[];
  /** More exist than were fetched; `total` when the API says how many. */
  more: boolean;
  total?: number;
}

/** The API's largest page (PageQuery's maximum). */
const MAX_PAGE = 100;
/** Without --limit: the API's own default page. */
export const DEFAULT_LIMIT = 50;

interface PageBody {
  items?: Record<string, unknown>[];
  pagination?: { after: string | null; has_more: boolean };
  total?: number;
  [member: string]: unknown;
}

/**
 * Reads `path` page by page. `member` names the array of an offset page; `cursor` asks for
 * cursor paging (executions), which a service answering offset pages instead still satisfies.
 */
export async function fetchList(client: ApiClient, path: string, query: URLSearchParams, member: string, o: ListOptions, cursor = false): Promise<Listed> {
  const want = o.paginate ? Infinity : (o.limit ?? DEFAULT_LIMIT);
  const items: Record<string, unknown>[] = [];
  let after: string | null = cursor ? '' : null;
  let offset = 0;
  for (;;) {
    const page = new URLSearchParams(query);
    page.set('limit', String(Math.min(MAX_PAGE, want - items.length)));
    if (after !== null) page.set('after', after);
    else if (offset > 0) page.set('offset', String(offset));
    const body = (await client.request('GET', `${path}?${page}`)) as PageBody;
    const rows = body.items ?? (body[member] as Record<string, unknown>[] | undefined) ?? [];
    items.push(...rows);
    offset += rows.length;
    let more: boolean;
    if (body.pagination) {
      after = body.pagination.after;
      more = body.pagination.has_more && after !== null;
    } else {
      after = null;
      more = rows.length > 0 && (body.total === undefined ? rows.length === Number(page.get('limit')) : offset < body.total);
    }
    if (!more || items.length >= want) return { items: items.slice(0, want), more: more || items.length > want, total: body.total };
  }
}

/** The line a table ends with when it shows only part of the list (stderr: stdout stays the table). */
export function moreHint(listed: Listed): string | undefined {
  if (!listed.more) return undefined;
  const of = listed.total === undefined ? '' : ` of ${listed.total}`;
  return `Showing ${listed.items.length}${of}: --limit N for more, --paginate for all.`;
}
