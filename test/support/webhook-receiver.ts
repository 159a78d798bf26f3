/** What tests of the webhook surfaces (console, CLI) ask of a loopback receiver. */
import { Webhook } from 'standardwebhooks';
import { until } from './poll';
import type { RecordedRequest, RecordingServer } from './recording-server';

/** The first `count` requests the receiver got, once it has them. */
export const arrived = (receiver: RecordingServer, count: number): Promise<RecordedRequest[]> =>
  until(`${count} request(s) at the receiver`, async () => (receiver.received.length >= count ? receiver.received : undefined), 15_000);

/** The payload of a request the official Standard Webhooks library verifies under `secret` (it throws otherwise). */
export const verified = (secret: string, request: RecordedRequest) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { event: string };
