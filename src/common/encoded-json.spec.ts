import type { FastifyReply, FastifyRequest } from 'fastify';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { EncodedJson } from './encoded-json';

describe('EncodedJson', () => {
  const listing = new EncodedJson({ tools: Array.from({ length: 50 }, (_, i) => ({ id: `tool-${i}`, description: 'x'.repeat(40) })) });
  const send = (encoded: EncodedJson, headers: Record<string, string>) => {
    const written: Record<string, unknown> = { status: 200 };
    const reply = {
      header: (name: string, value: unknown) => ((written[name] = value), reply),
      hasHeader: (name: string) => name in written,
      removeHeader: (name: string) => (delete written[name], reply),
      code: (status: number) => ((written.status = status), reply),
    };
    const body = encoded.send({ headers } as FastifyRequest, reply as unknown as FastifyReply);
    return { body, written };
  };
  const codingOf = (acceptEncoding: string) => send(listing, { 'accept-encoding': acceptEncoding }).written['content-encoding'] ?? 'identity';

  it.each([
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['GZIP ; Q=0.3, br;q=0.2', 'gzip'],
    ['gzip;q=0.2, identity;q=0.5', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0, gzip;q=0.1', 'gzip'],
    ['deflate', 'identity'],
    ['identity;q=0', 'identity'],
  ])('Accept-Encoding %p gets %s', (acceptEncoding, coding) => {
    expect(codingOf(acceptEncoding)).toBe(coding);
  });

  it('makes each form once, and each decodes to the identity bytes under its own ETag', async () => {
    const identity = send(listing, {});
    const gzip = send(listing, { 'accept-encoding': 'gzip' });
    const br = send(listing, { 'accept-encoding': 'br' });
    expect(send(listing, { 'accept-encoding': 'gzip' }).body).toBe(gzip.body);
    const plain = identity.body as Buffer;
    expect(gunzipSync(await gzip.body).equals(plain)).toBe(true);
    expect(brotliDecompressSync(await br.body).equals(plain)).toBe(true);
    expect(new Set([identity.written.etag, gzip.written.etag, br.written.etag]).size).toBe(3);
    for (const { written } of [identity, gzip, br]) expect(written).toMatchObject({ vary: 'accept-encoding', 'content-type': 'application/json; charset=utf-8', etag: expect.stringMatching(/^"[\w-]+"$/) });
  });

  it('answers a matching If-None-Match with 304 and no body, without Content-Encoding', () => {
    const fresh = new EncodedJson({ big: 'y'.repeat(5000) });
    const { written: first } = send(fresh, { 'accept-encoding': 'br' });
    const again = send(fresh, { 'accept-encoding': 'br', 'if-none-match': `"other", ${first.etag as string}` });
    expect(again.body).toBe('');
    expect(again.written).toMatchObject({ status: 304, etag: first.etag });
    expect(again.written).not.toHaveProperty('content-encoding');
    expect(send(fresh, { 'accept-encoding': 'gzip', 'if-none-match': first.etag as string }).written.status).toBe(200);
  });

  it('sends a body under 1 KB as it is, whatever is accepted', () => {
    const small = new EncodedJson({ tools: [] });
    expect(send(small, { 'accept-encoding': 'br, gzip' }).written).not.toHaveProperty('content-encoding');
  });
});
