import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagOf, notModified } from './http-cache';

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

type Coding = 'br' | 'gzip' | 'identity';
/** Preferred first when a client rates several codings alike. */
const CODINGS: readonly Coding[] = ['br', 'gzip', 'identity'];

/**
 * Made once per body, off the event loop (zlib's thread pool). Brotli quality 5: on the ~100 KB
 * listing 11 saves another 12% for 20 times the time (~200 ms), which open-ended searches could
 * make the service pay once per distinct query.
 */
const BROTLI_QUALITY = 5;

const compressors: Record<Exclude<Coding, 'identity'>, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => promisify(gzip)(body, { level: constants.Z_BEST_COMPRESSION }),
};

/**
 * A JSON answer serialized once, with its gzip and brotli forms made on first demand: each form is
 * a representation of its own, so each has its own strong ETag (the body's hash, then the coding).
 */
export class EncodedJson {
  private readonly body: Buffer;
  private readonly compressed = new Map<keyof typeof compressors, Promise<Buffer>>();
  private readonly etags: Record<Coding, string>;
  private readonly codings: readonly Coding[];

  constructor(value: unknown) {
    this.body = Buffer.from(JSON.stringify(value));
    const etag = etagOf(this.body);
    this.etags = { identity: etag, gzip: etag.replace(/"$/, '-gzip"'), br: etag.replace(/"$/, '-br"') };
    this.codings = this.body.length < COMPRESSION_THRESHOLD_BYTES ? ['identity'] : CODINGS;
  }

  /**
   * Answers with the form the request's Accept-Encoding prefers (docs/API.md#listing-tools): `304`
   * with no body when If-None-Match holds its ETag, before any form is made.
   */
  send(request: FastifyRequest, reply: FastifyReply): Buffer | '' | Promise<Buffer> {
    const coding = preferredCoding(request.headers['accept-encoding'], this.codings);
    reply.header('vary', 'accept-encoding');
    if (notModified(request, reply, this.etags[coding])) return '';
    reply.header('content-type', 'application/json; charset=utf-8');
    if (coding === 'identity') return this.body;
    reply.header('content-encoding', coding);
    let form = this.compressed.get(coding);
    if (!form) this.compressed.set(coding, (form = compressors[coding](this.body)));
    return form;
  }
}

/**
 * RFC 9110 §12.5.3: the offered coding of the highest q-value above 0 (`*` stands for codings not
 * named); identity when the header is absent or nothing fits.
 */
function preferredCoding(header: string | undefined, offered: readonly Coding[]): Coding {
  if (!header || offered.length === 1) return 'identity';
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const q = params.map((param) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(param)?.[1]).find((value) => value !== undefined);
    const coding = name.trim().toLowerCase();
    weights.set(coding === 'x-gzip' ? 'gzip' : coding, q === undefined ? 1 : Number(q) || 0);
  }
  // Unnamed identity ranks with the least wanted coding named (as the `negotiator` package does): `gzip;q=0.8` still prefers gzip.
  const unnamedIdentity = Math.min(...weights.values());
  const weightOf = (coding: Coding) => weights.get(coding) ?? weights.get('*') ?? (coding === 'identity' ? unnamedIdentity : 0);
  let best: Coding = 'identity';
  let bestWeight = 0;
  for (const coding of offered) {
    const weight = weightOf(coding);
    if (weight > bestWeight) [best, bestWeight] = [coding, weight];
  }
  return best;
}
