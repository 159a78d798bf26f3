/**
 * The network and monitoring tools' examples, on the world address (this family's ports are
 * 9000-9099):
 * - DNS records under example.test (dns-lookup);
 * - `secure.example.test:9043`, TLS with a leaf of the world's CA (tls-cert-check);
 * - `exporter.example.test:9091` (prom-client) and a real Prometheus on 9090 scraping it (metrics-collect);
 * - a real Alertmanager on 9093, and a PagerDuty-shaped receiver on `events.example.test:9044` (alert-trigger).
 */
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { caaRdata } from '../netmon/dnsmasq';
import { startExporter } from '../netmon/exporter';
import { startPagerDutyReceiver } from '../netmon/pagerduty';
import { startAlertmanager, startPrometheus } from '../netmon/prometheus';
import type { WorldPart } from './world';

/** Records the dns-lookup examples read (fixed addresses: --host-record wins over the world's catch-all). */
const DNS_RECORDS = [
  '--mx-host=example.test,mail.example.test,10',
  '--txt-record=example.test,v=spf1 mx -all',
  `--dns-rr=example.test,257,${caaRdata(0, 'issue', 'ca.example.test')}`,
  '--host-record=web.example.test,127.0.0.80,::1',
  '--cname=www.example.test,web.example.test',
  '--srv-host=_https._tcp.example.test,web.example.test,8443,10,5',
  // NXDOMAIN: a more specific --address without an address.
  '--address=/missing.example.test/',
];

const PORTS = { tls: 9043, pagerduty: 9044, prometheus: 9090, exporter: 9091, alertmanager: 9093 } as const;
/** The routing key the PagerDuty example's account-less call finds in the service's settings. */
const EXAMPLE_ROUTING_KEY = 'ExampleWorldRoutingKey0000000001';

function listen(server: TlsServer, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
}

export const part: WorldPart = {
  name: 'netmon',
  async start(world) {
    const stops: Array<() => Promise<void>> = [];
    const stop = async () => {
      for (const step of stops.splice(0).reverse()) await step().catch(() => undefined);
    };
    try {
      // 60 days: the example's days_left (59) holds for the whole run.
      const leaf = world.issueCertificate(['secure.example.test'], { days: 60 });
      const tls = createTlsServer({ cert: `${leaf.cert}${world.caCertificate}`, key: leaf.key }, (socket) => socket.end());
      await listen(tls, PORTS.tls, world.address);
      stops.push(() => new Promise<void>((resolve) => tls.close(() => resolve())));

      const exporter = await startExporter({ host: world.address, port: PORTS.exporter });
      stops.push(exporter.stop);
      // Waits for the first scrape, so the query example finds samples.
      const prometheus = await startPrometheus([{ job: 'shop', target: `${world.address}:${PORTS.exporter}`, instance: `exporter.example.test:${PORTS.exporter}` }], {
        host: world.address,
        port: PORTS.prometheus,
      });
      stops.push(prometheus.stop);
      const alertmanager = await startAlertmanager({ host: world.address, port: PORTS.alertmanager, receiver: 'on-call' });
      stops.push(alertmanager.stop);
      const pagerduty = await startPagerDutyReceiver(world.issueCertificate(['events.example.test']), { host: world.address, port: PORTS.pagerduty });
      stops.push(pagerduty.stop);

      return {
        dnsmasqArgs: DNS_RECORDS,
        env: {
          PROMETHEUS_URL: `http://prometheus.example.test:${PORTS.prometheus}`,
          ALERTMANAGER_URL: `http://alertmanager.example.test:${PORTS.alertmanager}`,
          PAGERDUTY_EVENTS_URL: `https://events.example.test:${PORTS.pagerduty}/v2/enqueue`,
          PAGERDUTY_ROUTING_KEY: EXAMPLE_ROUTING_KEY,
        },
        stop,
      };
    } catch (err) {
      await stop();
      throw err;
    }
  },
};
