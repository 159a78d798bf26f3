import type { EgressPolicy } from '../tools/egress/address-policy';
import { checkedRegisteredUrl } from '../tools/egress/registered-url';

/**
 * A subscription's URL as registered: http(s), no credentials, and not an address the egress
 * policy refuses; every delivery checks the addresses it connects to (src/webhooks/webhook-sender.ts).
 */
export function checkedWebhookUrl(raw: string, policy: EgressPolicy): string {
  return checkedRegisteredUrl(raw, policy, 'sign with the webhook secret instead');
}
