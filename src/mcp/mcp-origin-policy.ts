import { localhostAllowedHostnames, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import { isIP } from 'node:net';
import type { AppConfig } from '../config/app-config';

/** Host and Origin pairs whose verdicts are kept, the least recently seen dropped first. */
const MAX_REMEMBERED = 1_000;

/**
 * DNS-rebinding protection for /v1/mcp, as the MCP transport rules ask. A service bound to
 * loopback takes only a `Host` and `Origin` of localhost, 127.0.0.1 or [::1] (any port), or of
 * PUBLIC_URL and MCP_ALLOWED_ORIGINS (a proxy in front); a service bound elsewhere takes any Host
 * and an Origin of PUBLIC_URL or MCP_ALLOWED_ORIGINS (`*` for any). Clients that are not
 * browsers send no Origin.
 */
export class McpOriginPolicy {
  private readonly origins: ReadonlySet<string>;
  /** Hostnames a loopback-bound service answers to; null when bound elsewhere (Host is not checked). */
  private readonly hostnames: string[] | null;
  /** Verdicts (a refusal, or '' for none) by Host and Origin: clients send the same pair every time, and checking one parses URLs. */
  private readonly verdicts = new LRUCache<string, string>({ max: MAX_REMEMBERED });

  constructor(config: AppConfig) {
    const configured = config.MCP_ALLOWED_ORIGINS.split(',').map((origin) => origin.trim()).filter(Boolean);
    this.origins = new Set([new URL(config.publicUrl).origin, ...configured]);
    const named = [...this.origins].filter((origin) => origin !== '*').map((origin) => new URL(origin).hostname);
    this.hostnames = boundToLoopback(config.HOST) ? [...localhostAllowedHostnames(), ...named] : null;
  }

  /** Why this request may not use the endpoint, or null when it may. */
  refusal(host: string | undefined, origin: string | undefined): string | null {
    const pair = JSON.stringify([host ?? null, origin ?? null]);
    let verdict = this.verdicts.get(pair);
    if (verdict === undefined) this.verdicts.set(pair, (verdict = this.judge(host, origin) ?? ''));
    return verdict || null;
  }

  private judge(host: string | undefined, origin: string | undefined): string | null {
    if (this.hostnames) {
      const hostCheck = validateHostHeader(host, this.hostnames);
      if (!hostCheck.ok) return `Host '${host ?? ''}' is not one this loopback-bound MCP endpoint answers to (DNS rebinding); set PUBLIC_URL to the name clients use`;
    }
    if (origin === undefined || this.origins.has('*') || this.origins.has(origin)) return null;
    if (this.hostnames && validateOriginHeader(origin, localhostAllowedHostnames()).ok) return null;
    return `Origin '${origin}' may not use the MCP endpoint; allow it with MCP_ALLOWED_ORIGINS`;
  }
}

function boundToLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
