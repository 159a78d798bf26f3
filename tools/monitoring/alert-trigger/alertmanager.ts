/** Alertmanager's v2 API (`POST /api/v2/alerts`, `GET /api/v2/alerts`) through ctx.http. */
import { ToolError, type HttpResponse, type ToolContext } from '@tos/sdk';

export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  generatorURL?: string;
}

/** An alert as Alertmanager holds it (GettableAlert). */
export interface HeldAlert {
  fingerprint: string;
  startsAt: string;
  endsAt: string;
  status: { state: 'active' | 'suppressed' | 'unprocessed' };
  receivers: { name: string }[];
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label set Alertmanager accepts, else the name that breaks it. */
export function badLabelName(labels: Record<string, string>): string | undefined {
  return Object.keys(labels).find((name) => !LABEL_NAME.test(name));
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;
const SEPARATOR = 0xff;

/**
 * Alertmanager's identity of an alert: Prometheus's label-set fingerprint (FNV-1a 64 over the
 * sorted names and values, each followed by 0xff), as 16 hex digits. Lets a resolve report which
 * alert it ended, which Alertmanager no longer lists.
 */
export function fingerprintOf(labels: Record<string, string>): string {
  let hash = FNV_OFFSET;
  const add = (bytes: Iterable<number>) => {
    for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  };
  for (const name of Object.keys(labels).sort()) {
    add(Buffer.from(name, 'utf8'));
    add([SEPARATOR]);
    add(Buffer.from(labels[name], 'utf8'));
    add([SEPARATOR]);
  }
  return hash.toString(16).padStart(16, '0');
}

export async function postAlert(ctx: ToolContext, baseUrl: string, alert: PostableAlert, timeoutMs: number): Promise<void> {
  const response = await ctx.http.request(`${trimmed(baseUrl)}/api/v2/alerts`, { method: 'POST', json: [alert], timeoutMs, parameter: 'url' });
  if (response.status === 400) throw refusedAlert(response);
  if (response.status < 200 || response.status >= 300) throw ToolError.fromResponse('alertmanager', response);
}

/** The alert with exactly these labels as Alertmanager now lists it; undefined once resolved. */
export async function findAlert(ctx: ToolContext, baseUrl: string, labels: Record<string, string>, timeoutMs: number): Promise<HeldAlert | undefined> {
  const query = new URLSearchParams(Object.entries(labels).map(([name, value]): [string, string] => ['filter', `${name}=${JSON.stringify(value)}`]));
  const response = await ctx.http.request(`${trimmed(baseUrl)}/api/v2/alerts?${query}`, { timeoutMs, parameter: 'url' });
  if (response.status < 200 || response.status >= 300) throw ToolError.fromResponse('alertmanager', response);
  const fingerprint = fingerprintOf(labels);
  return response.json<HeldAlert[]>().find((alert) => alert.fingerprint === fingerprint);
}

/** Alertmanager's 400 names what it could not take (a label, a time): the caller's input. */
function refusedAlert(response: HttpResponse): ToolError {
  const body = response.text().slice(0, 500);
  let reason = body;
  try {
    const parsed = JSON.parse(body) as string | { message?: string };
    reason = typeof parsed === 'string' ? parsed : (parsed.message ?? body);
  } catch {
    // plain text
  }
  return new ToolError(`Alertmanager refused the alert: ${reason}`, {
    code: 'INVALID_INPUT',
    details: { parameter: /time/i.test(reason) ? 'starts_at' : 'labels', expected: 'an alert Alertmanager accepts', received: reason, upstream: { service: 'alertmanager', status: 400 } },
  });
}

function trimmed(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}
