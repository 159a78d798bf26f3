/** The /v1 API and the console's own /console/session, called with the session cookie. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly suggestion?: string,
    /** The envelope's `details` (a workflow's validation problems, the parameter at fault). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The SPEC's error envelope in one line, as the page shows it. */
  describe(): string {
    return `${this.code}: ${this.message}${this.suggestion ? ` — ${this.suggestion}` : ''}`;
  }
}

let csrfToken = '';

/** Every state-changing request carries it; the server refuses those without. */
export function useCsrfToken(token: string): void {
  csrfToken = token;
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) {
    const envelope = await response.json().catch(() => ({}));
    const error = envelope?.error ?? {};
    throw new ApiError(response.status, error.code ?? 'INTERNAL_ERROR', error.message ?? response.statusText, error.suggestion, error.details);
  }
  return response;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export async function apiText(path: string): Promise<string> {
  return (await send('GET', path)).text();
}

/** A query string from the members that are not undefined (an empty string is a value: `after=` starts a cursor walk). */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
