/**
 * Signs the client's requests (docs/API.md#signed-requests). The service refuses a signature it has
 * seen, and X-Timestamp counts whole seconds: a request identical to one already sent this second
 * (a poll) waits for the next second instead of being refused as a replay.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SIGNATURE_HEADER, signatureHeaders, type SignedParts } from '../../identity/request-signature';

export class RequestSigner {
  private second = 0;
  private readonly sentThisSecond = new Set<string>();

  constructor(private readonly secret: string) {}

  async headers(parts: Omit<SignedParts, 'timestamp'>): Promise<Record<string, string>> {
    for (;;) {
      const now = Date.now();
      const second = Math.floor(now / 1000);
      if (second !== this.second) {
        this.second = second;
        this.sentThisSecond.clear();
      }
      const headers = signatureHeaders(this.secret, parts, now);
      if (!this.sentThisSecond.has(headers[SIGNATURE_HEADER])) {
        this.sentThisSecond.add(headers[SIGNATURE_HEADER]);
        return headers;
      }
      await sleep(1000 - (now % 1000));
    }
  }
}
