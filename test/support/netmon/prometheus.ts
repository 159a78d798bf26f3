/**
 * Real Prometheus and Alertmanager servers (Debian's `prometheus` and `prometheus-alertmanager`)
 * on loopback, each with its own config and data in a temp dir.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../free-port';
import { until } from '../poll';
import { answers200, startDaemon, type Daemon } from './daemon';

export interface HttpDaemon extends Daemon {
  /** Base URL, `http://host:port`. */
  url: string;
}

export interface ScrapeJob {
  job: string;
  /** `host:port` of the exporter. */
  target: string;
  /** The instance label the samples get (default: the target). */
  instance?: string;
}

function findBinary(...candidates: string[]): string | null {
  for (const candidate of candidates) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

export const findPrometheus = () => findBinary('/usr/bin/prometheus');
export const findAlertmanager = () => findBinary('/usr/bin/prometheus-alertmanager', '/usr/bin/alertmanager');

/** Scrapes every second, so the first samples land soon after start. */
function prometheusConfig(jobs: readonly ScrapeJob[]): string {
  const lines = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', '  evaluation_interval: 1s', 'scrape_configs:'];
  for (const { job, target, instance } of jobs) {
    lines.push(`  - job_name: ${JSON.stringify(job)}`, '    static_configs:', `      - targets: [${JSON.stringify(target)}]`);
    if (instance) lines.push('    relabel_configs:', '      - target_label: instance', `        replacement: ${JSON.stringify(instance)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Prometheus on `host:port` (a free loopback port by default) scraping `jobs`; resolves once the
 * first scrape of every job has landed (Prometheus's first scrape comes some seconds after start).
 */
export async function startPrometheus(jobs: readonly ScrapeJob[], options: { host?: string; port?: number } = {}): Promise<HttpDaemon> {
  const binary = findPrometheus();
  if (!binary) throw new Error('prometheus not found (apt-get install prometheus)');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort());
  const url = `http://${host}:${port}`;
  const daemon = await startDaemon({
    name: 'prometheus',
    binary,
    prepare: (dir) => writeFileSync(path.join(dir, 'prometheus.yml'), prometheusConfig(jobs)),
    args: (dir) => [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=${host}:${port}`, '--log.level=warn'],
    ready: () => answers200(`${url}/-/ready`),
  });
  try {
    for (const { job } of jobs) {
      await until(`Prometheus's first scrape of ${job}`, async () => {
        const answer = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(`up{job="${job}"} == 1`)}`)).json()) as { data?: { result?: unknown[] } };
        return answer.data?.result?.length ? true : undefined;
      }, 30_000, 100);
    }
  } catch (err) {
    await daemon.stop();
    throw err;
  }
  return { ...daemon, url };
}

/** Alertmanager on `host:port` (a free loopback port by default), clustering off, one receiver (`receiver`) that notifies nobody. */
export async function startAlertmanager(options: { host?: string; port?: number; receiver?: string } = {}): Promise<HttpDaemon> {
  const binary = findAlertmanager();
  if (!binary) throw new Error('prometheus-alertmanager not found (apt-get install prometheus-alertmanager)');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort());
  const url = `http://${host}:${port}`;
  const daemon = await startDaemon({
    name: 'alertmanager',
    binary,
    prepare: (dir) => {
      const receiver = JSON.stringify(options.receiver ?? 'nowhere');
      writeFileSync(path.join(dir, 'alertmanager.yml'), `route:\n  receiver: ${receiver}\nreceivers:\n  - name: ${receiver}\n`);
    },
    args: (dir) => [
      `--config.file=${path.join(dir, 'alertmanager.yml')}`,
      `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=${host}:${port}`,
      // Empty: no cluster listener, no gossip to peers.
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    ready: () => answers200(`${url}/-/ready`),
  });
  return { ...daemon, url };
}
