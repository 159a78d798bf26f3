import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runTool, toolFailure, type RunToolOverrides } from '@tos/sdk/testing';
import { freePort } from '../../../test/support/free-port';
import { makeCertificate, type KeyedCertificate } from '../../../test/support/netmon/certificates';
import { startPagerDutyReceiver, type PagerDutyReceiver } from '../../../test/support/netmon/pagerduty';
import { findAlertmanager, startAlertmanager, type HttpDaemon } from '../../../test/support/netmon/prometheus';
import { describeWith } from '../../../test/support/prerequisites';
import { AlertTriggerTool } from './alert-trigger.tool';

interface HeldAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  status: { state: string };
}

const ROUTING_KEY = 'R0ut1ngKeyOfTheShopService000001';
const ACCOUNT_KEY = 'AccountOwnRoutingKey000000000002';

describeWith(findAlertmanager(), 'prometheus-alertmanager')('alert-trigger', () => {
  let alertmanager: HttpDaemon;
  let ca: KeyedCertificate;
  let pagerduty: PagerDutyReceiver;
  /** Accepts requests and never answers (for cancel). */
  let hanging: Server;
  let hangingUrl: string;

  beforeAll(async () => {
    alertmanager = await startAlertmanager({ receiver: 'on-call' });
    ca = await makeCertificate({ name: 'Alert Test Root CA', isCa: true });
    pagerduty = await startPagerDutyReceiver(await makeCertificate({ name: 'localhost', ipAddresses: ['127.0.0.1'], issuer: ca }));
    hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hanging?.closeAllConnections();
    await Promise.all([alertmanager?.stop(), pagerduty?.stop(), hanging && new Promise((resolve) => hanging.close(resolve))]);
  });

  /** What Alertmanager lists for a label matcher, read with its own API. */
  const held = async (alertname: string): Promise<HeldAlert[]> => (await fetch(`${alertmanager.url}/api/v2/alerts?filter=${encodeURIComponent(`alertname="${alertname}"`)}`)).json() as Promise<HeldAlert[]>;

  describe('Alertmanager', () => {
    it('fires an alert and reports it as Alertmanager holds it', async () => {
      const out = await runTool(AlertTriggerTool, {
        url: alertmanager.url,
        alert_name: 'DiskAlmostFull',
        severity: 'warning',
        summary: 'Disk /var is 91% full',
        description: 'Free space fell under 9% on db-1.',
        labels: { instance: 'db-1', team: 'storage' },
        annotations: { runbook_url: 'https://runbooks.example/disk' },
        generator_url: 'https://prometheus.example/graph?g0.expr=disk',
      });
      const [alert] = await held('DiskAlmostFull');
      expect(alert).toMatchObject({
        labels: { alertname: 'DiskAlmostFull', severity: 'warning', instance: 'db-1', team: 'storage' },
        annotations: { summary: 'Disk /var is 91% full', description: 'Free space fell under 9% on db-1.', runbook_url: 'https://runbooks.example/disk' },
        generatorURL: 'https://prometheus.example/graph?g0.expr=disk',
        status: { state: 'active' },
      });
      expect(out).toEqual({
        provider: 'alertmanager',
        action: 'trigger',
        accepted: true,
        dedup_key: alert.fingerprint,
        state: 'active',
        starts_at: alert.startsAt,
        ends_at: alert.endsAt,
        receivers: ['on-call'],
        message: null,
      });
    });

    it('keeps the given start and end, and resolves the alert (Alertmanager lists it no more)', async () => {
      const startsAt = new Date(Date.now() - 60_000).toISOString();
      const endsAt = new Date(Date.now() + 3_600_000).toISOString();
      const fired = await runTool(AlertTriggerTool, { url: alertmanager.url, alert_name: 'QueueStuck', starts_at: startsAt, ends_at: endsAt });
      expect(fired).toMatchObject({ state: 'active', starts_at: startsAt, ends_at: endsAt });
      expect(await held('QueueStuck')).toHaveLength(1);
      const resolved = await runTool(AlertTriggerTool, { url: alertmanager.url, action: 'resolve', alert_name: 'QueueStuck' });
      expect(resolved).toMatchObject({ action: 'resolve', accepted: true, dedup_key: fired.dedup_key, state: 'resolved', starts_at: null, receivers: [] });
      expect(Date.parse(resolved.ends_at as string)).toBeLessThanOrEqual(Date.now());
      expect(await held('QueueStuck')).toEqual([]);
    });

    it("computes Alertmanager's own fingerprint of the labels (what a resolve reports)", async () => {
      const sets = [
        { alert_name: 'Fingerprint', severity: 'info', labels: { region: 'Île-de-France ✓' } },
        { alert_name: 'Fingerprint', severity: 'critical', labels: { b: '2', a: '1' } },
      ];
      const computed: string[] = [];
      for (const set of sets) computed.push((await runTool(AlertTriggerTool, { url: alertmanager.url, ...set })).dedup_key as string);
      expect(computed.sort()).toEqual((await held('Fingerprint')).map((alert) => alert.fingerprint).sort());
    });

    it('uses ALERTMANAGER_URL when the call names no url', async () => {
      await expect(runTool(AlertTriggerTool, { alert_name: 'FromSetting' }, { config: { ALERTMANAGER_URL: alertmanager.url } })).resolves.toMatchObject({ state: 'active', receivers: ['on-call'] });
      expect(await held('FromSetting')).toHaveLength(1);
    });
  });

  describe('PagerDuty', () => {
    const pd = (input: Record<string, unknown>, overrides: RunToolOverrides = {}) =>
      runTool(AlertTriggerTool, { provider: 'pagerduty', ...input }, { tlsCa: ca.cert, config: { PAGERDUTY_EVENTS_URL: pagerduty.url, PAGERDUTY_ROUTING_KEY: ROUTING_KEY }, ...overrides });

    it('triggers an incident with the routing key of the service, and returns its dedup_key', async () => {
      const out = await pd({
        alert_name: 'CheckoutErrors',
        summary: 'Checkout error rate above 5%',
        severity: 'critical',
        source: 'shop-api',
        dedup_key: 'shop-checkout-errors',
        description: '7.2% over 5 minutes',
        labels: { region: 'eu' },
        starts_at: '2026-11-22T10:00:00Z',
        generator_url: 'https://grafana.example/d/shop',
      });
      expect(out).toEqual({ provider: 'pagerduty', action: 'trigger', accepted: true, dedup_key: 'shop-checkout-errors', state: null, starts_at: null, ends_at: null, receivers: [], message: 'Event processed' });
      expect(pagerduty.events.at(-1)).toEqual({
        routing_key: ROUTING_KEY,
        event_action: 'trigger',
        dedup_key: 'shop-checkout-errors',
        payload: {
          summary: 'Checkout error rate above 5%',
          source: 'shop-api',
          severity: 'critical',
          timestamp: '2026-11-22T10:00:00Z',
          class: 'CheckoutErrors',
          custom_details: { region: 'eu', description: '7.2% over 5 minutes' },
        },
        client: 'tool-orchestration-service',
        client_url: 'https://grafana.example/d/shop',
      });
    });

    it("takes the PagerDuty dedup_key when none is given, and the account's own routing key first", async () => {
      const out = await pd({ alert_name: 'NoKeyGiven' }, { tlsCa: ca.cert, config: { PAGERDUTY_EVENTS_URL: pagerduty.url, PAGERDUTY_ROUTING_KEY: ROUTING_KEY }, secrets: { PAGERDUTY_ROUTING_KEY: ACCOUNT_KEY } });
      expect(out.dedup_key).toMatch(/^[0-9a-f]{32}$/);
      expect(pagerduty.events.at(-1)).toMatchObject({ routing_key: ACCOUNT_KEY, dedup_key: out.dedup_key, payload: { summary: 'NoKeyGiven', source: 'tool-orchestration-service', severity: 'error' } });
    });

    it('acknowledges and resolves by dedup_key', async () => {
      for (const action of ['acknowledge', 'resolve']) {
        await expect(pd({ action, dedup_key: 'shop-checkout-errors' })).resolves.toMatchObject({ action, dedup_key: 'shop-checkout-errors', message: 'Event processed' });
        expect(pagerduty.events.at(-1)).toEqual({ routing_key: ROUTING_KEY, event_action: action, dedup_key: 'shop-checkout-errors' });
      }
    });

    it('fails without a routing key, saying how to set one', async () => {
      const err = await toolFailure(pd({ alert_name: 'X' }, { tlsCa: ca.cert, config: { PAGERDUTY_EVENTS_URL: pagerduty.url } }));
      expect(err.code).toBe('TOOL_ERROR');
      expect(err.message).toContain('PAGERDUTY_ROUTING_KEY');
    });

    it("reports PagerDuty's refusal of an invalid event, not retryable", async () => {
      const err = await toolFailure(pd({ alert_name: 'X' }, { tlsCa: ca.cert, config: { PAGERDUTY_EVENTS_URL: pagerduty.url, PAGERDUTY_ROUTING_KEY: 'too-short' } }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'pagerduty', status: 400 } } });
      expect(err.message).toContain("Length of 'routing_key' is incorrect");
    });

    it('is retryable when PagerDuty throttles, with its Retry-After', async () => {
      pagerduty.throttled.add(ROUTING_KEY);
      try {
        const err = await toolFailure(pd({ alert_name: 'X' }));
        expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retryAfter: 30, details: { upstream: { service: 'pagerduty', status: 429 } } });
      } finally {
        pagerduty.throttled.delete(ROUTING_KEY);
      }
    });

    it('refuses to send the routing key to a server whose certificate is not trusted', async () => {
      const before = pagerduty.events.length;
      const err = await toolFailure(pd({ alert_name: 'X' }, { tlsCa: undefined }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', details: { error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' } });
      expect(pagerduty.events.length).toBe(before);
    });
  });

  describe('bad input', () => {
    it.each([
      ['provider', { provider: 'opsgenie', alert_name: 'X' }],
      ['action', { url: 'http://127.0.0.1:1', action: 'acknowledge', alert_name: 'X' }],
      ['alert_name', { url: 'http://127.0.0.1:1' }],
      ['url', { alert_name: 'X' }],
      ['labels', { url: 'http://127.0.0.1:1', alert_name: 'X', labels: { '1bad': 'v' } }],
      ['starts_at', { url: 'http://127.0.0.1:1', alert_name: 'X', starts_at: 'yesterday' }],
      ['ends_at', { url: 'http://127.0.0.1:1', alert_name: 'X', starts_at: '2026-01-02T00:00:00Z', ends_at: '2026-01-01T00:00:00Z' }],
      ['dedup_key', { provider: 'pagerduty', action: 'resolve' }],
      ['summary', { provider: 'pagerduty' }],
    ])('refuses a bad or missing %s', async (parameter, input) => {
      const err = await toolFailure(runTool(AlertTriggerTool, input, { config: { PAGERDUTY_ROUTING_KEY: ROUTING_KEY } }));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    });
  });

  it('is a retryable error when Alertmanager is not there', async () => {
    const err = await toolFailure(runTool(AlertTriggerTool, { url: `http://127.0.0.1:${await freePort()}`, alert_name: 'X' }));
    expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
  });

  it('stops at once when cancelled mid-request', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    setTimeout(() => controller.abort(reason), 150);
    const started = Date.now();
    await expect(runTool(AlertTriggerTool, { url: hangingUrl, alert_name: 'X', timeout_ms: 20_000 }, { signal: controller.signal })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses loopback receivers through the egress policy when they are not allowed', async () => {
    const am = await toolFailure(runTool(AlertTriggerTool, { url: alertmanager.url, alert_name: 'X' }, { egressAllow: '' }));
    expect(am).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url', expected: 'a public address' } });
    const pd = await toolFailure(runTool(AlertTriggerTool, { provider: 'pagerduty', alert_name: 'X' }, { egressAllow: '', tlsCa: ca.cert, config: { PAGERDUTY_EVENTS_URL: pagerduty.url, PAGERDUTY_ROUTING_KEY: ROUTING_KEY } }));
    expect(pd).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'PAGERDUTY_EVENTS_URL' } });
  });
});
