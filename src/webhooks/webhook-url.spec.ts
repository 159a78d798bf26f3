import { EgressPolicy } from '../tools/egress/address-policy';
import { checkedWebhookUrl } from './webhook-url';

describe('checkedWebhookUrl', () => {
  const strict = new EgressPolicy('');

  it('takes http(s) URLs to names and public addresses, normalised', () => {
    expect(checkedWebhookUrl('https://hooks.example.com/tos?x=1', strict)).toBe('https://hooks.example.com/tos?x=1');
    expect(checkedWebhookUrl('http://93.184.216.34', strict)).toBe('http://93.184.216.34/');
  });

  it.each([
    ['ftp://hooks.example.com/', /http or https/],
    ['hooks.example.com/tos', /absolute URL/],
    ['https://user:pw@hooks.example.com/', /credentials/],
    ['http://10.1.2.3/', /private/],
    ['http://[::1]:8080/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://localhost:3000/', /loopback/],
    ['http://api.localhost/', /loopback/],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, /longer than/],
  ])('refuses %s', (url, why) => {
    expect(() => checkedWebhookUrl(url, strict)).toThrow(why);
  });

  it('lets EGRESS_ALLOW open an address', () => {
    expect(checkedWebhookUrl('http://127.0.0.1:9/hook', new EgressPolicy('127.0.0.1'))).toBe('http://127.0.0.1:9/hook');
    expect(() => checkedWebhookUrl('http://127.0.0.2:9/hook', new EgressPolicy('127.0.0.1'))).toThrow(/loopback/);
  });
});
