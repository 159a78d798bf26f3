/**
 * A loopback Prometheus exporter made with prom-client (the Node client a real service uses):
 * fixed metrics of each type, served as OpenMetrics or the text format depending on Accept, as
 * real exporters negotiate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

export interface Exporter {
  /** `http://host:port/metrics` */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The shop's metrics; values fixed so examples and tests can hold them exactly. One set per registry: prom-client renames a shared counter for OpenMetrics. */
function registerShopMetrics(registry: Registry<typeof Registry.PROMETHEUS_CONTENT_TYPE | typeof Registry.OPENMETRICS_CONTENT_TYPE>): void {
  const registers = [registry];
  const orders = new Counter({ name: 'shop_orders_total', help: 'Orders placed, by status.', labelNames: ['status'], registers });
  orders.inc({ status: 'paid' }, 42);
  orders.inc({ status: 'failed' }, 3);
  new Gauge({ name: 'shop_queue_depth', help: 'Jobs waiting in the queue.', registers }).set(7);
  const checkout = new Histogram({ name: 'shop_checkout_seconds', help: 'Checkout time.', buckets: [0.1, 0.5, 1], registers });
  [0.05, 0.2, 0.3, 2].forEach((seconds) => checkout.observe(seconds));
  const payload = new Summary({ name: 'shop_payload_bytes', help: 'Request payload size.', percentiles: [0.5, 0.9], registers });
  [100, 200, 300].forEach((bytes) => payload.observe(bytes));
  new Gauge({ name: 'shop_build_info', help: 'Build of the shop, with "quotes" and a \\ backslash.', labelNames: ['version', 'note'], registers }).set({ version: '1.4.2', note: 'line one\nline "two"' }, 1);
}

/** `textOnly`: an older exporter that serves the text format whatever the Accept header says. */
export async function startExporter(options: { host?: string; port?: number; textOnly?: boolean } = {}): Promise<Exporter> {
  const text = new Registry();
  const openMetrics = new Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>();
  openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  registerShopMetrics(text);
  registerShopMetrics(openMetrics);
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end('not found');
    const registry = !options.textOnly && (req.headers.accept ?? '').includes('application/openmetrics-text') ? openMetrics : text;
    void registry.metrics().then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
