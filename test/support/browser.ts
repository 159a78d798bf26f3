/**
 * A browser's part of redirect-based sign-ins, over fetch: a cookie jar by host and path (as browsers
 * keep them: the port does not separate sites, so two servers on 127.0.0.1 share a jar, and
 * same-named cookies of different paths live side by side), Max-Age=0 deleting, and redirects
 * followed one at a time so a test can see every hop.
 */
interface Cookie {
  name: string;
  value: string;
  path: string;
}

export class Browser {
  private readonly jar = new Map<string, Cookie[]>();

  /** One request with the cookies its host and path get; the response's Set-Cookie lines go into the jar. Redirects are not followed. */
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const { hostname, pathname } = new URL(url);
    const cookies = this.jar.get(hostname) ?? [];
    const cookie = cookies
      .filter((entry) => pathMatches(pathname, entry.path))
      .map((entry) => `${entry.name}=${entry.value}`)
      .join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as object), ...(cookie && { cookie }) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const pathAttribute = attributes.find((attribute) => /^path=/i.test(attribute));
      const path = pathAttribute ? pathAttribute.slice(5) : pathname.slice(0, pathname.lastIndexOf('/')) || '/';
      const kept = cookies.filter((entry) => !(entry.name === name && entry.path === path));
      if (!attributes.some((attribute) => /^max-age=0$/i.test(attribute))) kept.push({ name, value: pair.slice(eq + 1).trim(), path });
      cookies.splice(0, cookies.length, ...kept);
    }
    this.jar.set(hostname, cookies);
    return response;
  }

  /**
   * GETs `url` and the redirects after it until a page answers, or until the next hop is one `stop`
   * picks (not requested: a redirect URI nobody serves). Returns the last response, or the stop URL.
   */
  async follow(url: string, stop: (next: URL) => boolean = () => false): Promise<{ response: Response | null; url: URL; hops: URL[] }> {
    const hops = [new URL(url)];
    for (let hop = 0; hop < 20; hop++) {
      const current = hops[hops.length - 1];
      const response = await this.go(current.href);
      if (response.status < 300 || response.status >= 400) return { response, url: current, hops };
      await response.body?.cancel();
      const next = new URL(response.headers.get('location')!, current);
      hops.push(next);
      if (stop(next)) return { response: null, url: next, hops };
    }
    throw new Error(`More than 20 redirects from ${url}`);
  }

  /** The value of a cookie the page at `url` would be sent. */
  cookie(url: string, name: string): string | undefined {
    const { hostname, pathname } = new URL(url);
    return this.jar.get(hostname)?.find((entry) => entry.name === name && pathMatches(pathname, entry.path))?.value;
  }
}

/** RFC 6265 §5.1.4. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  return requestPath === cookiePath || (requestPath.startsWith(cookiePath) && (cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'));
}
