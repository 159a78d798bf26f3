/**
 * A browser's part of redirect-based sign-ins, over fetch: a cookie jar by host (as browsers keep
 * them: the port does not separate sites), Max-Age=0 deleting, and redirects followed one at a
 * time so a test can see every hop.
 */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  /** One request with the host's cookies; the response's Set-Cookie lines go into the jar. Redirects are not followed. */
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const { hostname } = new URL(url);
    const cookies = this.jar.get(hostname) ?? new Map<string, string>();
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as object), ...(cookie && { cookie }) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))) cookies.delete(name);
      else cookies.set(name, pair.slice(eq + 1).trim());
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

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).hostname)?.get(name);
  }
}
