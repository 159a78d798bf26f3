import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from '../support/free-port';
import { until } from '../support/poll';

export interface ScrapeTarget {
  /** host:port on loopback. */
  address: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string;
}

export interface PrometheusServer {
  url: string;
  /** An instant PromQL query through the HTTP API: the result vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

export function findPrometheus(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** A throwaway Prometheus (Debian's) on a free loopback port, scraping `targets` every second. */
export async function startPrometheus(targets: ScrapeTarget[]): Promise<PrometheusServer> {
  const binary = findPrometheus();
  if (!binary) throw new Error('prometheus not found on PATH (apt-get install prometheus)');
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-prometheus-'));
  const port = await freePort();
  const jobs = targets.map((target, i) => [
    `  - job_name: tos-${i}`,
    `    metrics_path: /metrics`,
    ...(target.token ? [`    authorization:`, `      credentials: ${JSON.stringify(target.token)}`] : []),
    `    static_configs:`,
    `      - targets: [${JSON.stringify(target.address)}]`,
  ]);
  const config = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', 'scrape_configs:', ...jobs.flat()].join('\n');
  writeFileSync(path.join(dir, 'prometheus.yml'), `${config}\n`);
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) await new Promise<void>((resolve) => child.once('exit', () => resolve()).kill('SIGTERM'));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until('Prometheus to be ready', async () => ((await fetch(`${url}/-/ready`).catch(() => null))?.ok ? true : undefined), 15_000, 100);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    stop,
    query: async (promql) => {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as { status: string; error?: string; data: { result: any[] } };
      if (body.status !== 'success') throw new Error(`PromQL ${promql}: ${body.error}`);
      return body.data.result;
    },
  };
}
