import { isIP } from 'node:net';
import { AppException } from '../../common/errors';
import { unbracket, type EgressPolicy } from './address-policy';

const MAX_URL_LENGTH = 2048;

/**
 * A URL the service will call later (a webhook, an upstream), as registered: http(s), no
 * credentials in it (`instead` says where they go), and not an address the egress policy refuses.
 * Names are not resolved here (what they resolve to can change): every connection checks the
 * addresses it dials (src/tools/egress/egress.ts).
 */
export function checkedRegisteredUrl(raw: string, policy: EgressPolicy, instead: string, parameter = 'url'): string {
  const refuse = (why: string) => AppException.invalidRequest(`${parameter} ${why}`, { parameter });
  if (raw.length > MAX_URL_LENGTH) throw refuse(`is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be http or https');
  if (url.username || url.password) throw refuse(`must not carry credentials (${instead})`);
  const host = unbracket(url.hostname);
  // `localhost` names loopback whatever a resolver says (RFC 6761).
  const literal = isIP(host) ? host : /(^|\.)localhost\.?$/i.test(host) ? '127.0.0.1' : null;
  const refusal = literal && policy.refusal(host, literal);
  if (refusal) throw refuse(`points at a refused address (${refusal}); the operator opens exceptions with EGRESS_ALLOW`);
  return url.toString();
}
