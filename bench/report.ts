/** The shape of bench/results/latest.json, and its rendering as the tables printed to stdout. */
import type { LoadResult } from './load';

/** A measured run and the CPU time the server spent per response in it (null when none came back). */
export interface MeasuredLoad extends LoadResult {
  cpuUsPerRequest: number | null;
}

export interface ScenarioResult extends MeasuredLoad {
  scenario: string;
  /** Service req/s ÷ the baseline req/s of the same configuration. */
  ratio: number;
  /** The target ratio for this scenario and configuration, when there is one. */
  target: number | null;
  /** Req/s against another scenario of the same run, with the target for that ratio. */
  /** Against another scenario, from runs taken back to back ([reference, this] req/s per pair). */
  versus: { scenario: string; ratio: number; pairs: number[][]; target: number } | null;
  /** Against raw Fastify answering exactly the bytes the service answered (status, headers, body). */
  sameBytes: { requestsPerSecond: number; ratio: number; target: number | null; cpuUsPerRequest: number | null };
  /** Set when a single request before the load run did not answer 2xx: status and body excerpt. */
  probeFailure: string | null;
}

export interface ConfigurationResult {
  configuration: string;
  startupMs: number;
  rssMbReady: number;
  startupTarget: { readyMs: number; rssMb: number };
  rssMbAfterLoad: number;
  baseline: MeasuredLoad;
  scenarios: ScenarioResult[];
  /** The service's own last output lines (LOG_LEVEL=warn: warnings and errors only). */
  serviceOutput: string;
}

export interface BenchReport {
  startedAt: string;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  machine: { node: string; cpus: number; platform: string };
  configurations: ConfigurationResult[];
}

/** Why a service row cannot be trusted, or null when every response was 2xx. */
function problemOf(row: ScenarioResult): string | null {
  const parts = [
    row.probeFailure && `probe: ${row.probeFailure}`,
    row.non2xx > 0 && `${row.non2xx} non-2xx (statuses ${JSON.stringify(row.statusCodes)})`,
    row.errors > 0 && `${row.errors} errors`,
    row.timeouts > 0 && `${row.timeouts} timeouts`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : null;
}

/** The printed tables, and one line per service row that did not get 2xx everywhere. */
export function formatReport(report: BenchReport): { text: string; problems: string[] } {
  const load: string[][] = [
    ['configuration', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', 'same-bytes req/s', 'same-bytes ratio', 'target', 'CPU µs/req', 'same-bytes CPU', 'own µs/req', 'vs REST', 'non-2xx', 'errors', 'bytes/resp'],
  ];
  const startup: string[][] = [['configuration', 'start-up ms', 'target', 'RSS ready MiB', 'target', 'RSS after load MiB']];
  const problems: string[] = [];
  for (const c of report.configurations) {
    const b = c.baseline;
    load.push([c.configuration, 'baseline GET /hello (raw Fastify)', String(b.requestsPerSecond), String(b.p50Ms), String(b.p99Ms), '1', '', '', '', '', micros(b.cpuUsPerRequest), '', '', '', String(b.non2xx), String(b.errors + b.timeouts), String(b.bytesPerResponse)]);
    for (const s of c.scenarios) {
      const problem = problemOf(s);
      if (problem) problems.push(`!!! ${c.configuration} / ${s.scenario}: ${problem}`);
      const target = s.target === null ? '' : verdict(s.ratio, s.target);
      const versus = s.versus ? `${s.versus.ratio.toFixed(2)} ${verdict(s.versus.ratio, s.versus.target)}` : '';
      const flag = problem ? '!! ' : '';
      const sameBytesTarget = s.sameBytes.target === null ? '' : verdict(s.sameBytes.ratio, s.sameBytes.target);
      load.push([
        c.configuration, flag + s.scenario, String(s.requestsPerSecond), String(s.p50Ms), String(s.p99Ms), s.ratio.toFixed(3), target,
        String(s.sameBytes.requestsPerSecond), s.sameBytes.ratio.toFixed(3), sameBytesTarget,
        micros(s.cpuUsPerRequest), micros(s.sameBytes.cpuUsPerRequest), micros(ownCost(s)),
        versus, String(s.non2xx), String(s.errors + s.timeouts), String(s.bytesPerResponse),
      ]);
    }
    const { readyMs, rssMb } = c.startupTarget;
    startup.push([c.configuration, String(c.startupMs), atMost(c.startupMs, readyMs), c.rssMbReady.toFixed(1), atMost(c.rssMbReady, rssMb), c.rssMbAfterLoad.toFixed(1)]);
  }
  const heading = `${report.connections} connections, ${report.durationSeconds} s per run after a ${report.warmupSeconds} s warm-up; node ${report.machine.node}, ${report.machine.cpus} CPUs`;
  const sections = [heading, table(load), table(startup)];
  for (const c of report.configurations) {
    if (c.serviceOutput.trim()) sections.push(`service output (${c.configuration}, last lines):\n${c.serviceOutput.trimEnd()}`);
  }
  if (problems.length > 0) sections.push(['!!! NOT EVERY RESPONSE WAS 2xx: THESE ROWS DO NOT MEASURE THE SERVICE !!!', ...problems].join('\n'));
  return { text: sections.join('\n\n'), problems };
}

/** An upper bound's verdict (start-up time, memory), printed like verdict's. */
function atMost(value: number, target: number): string {
  return `≤${target} ${value <= target ? 'met' : 'MISSED'}`;
}

const micros = (value: number | null) => (value === null ? '' : value.toFixed(0));

/** What our code costs per request: the service's CPU over raw Fastify's answering the same bytes. */
function ownCost(s: ScenarioResult): number | null {
  return s.cpuUsPerRequest === null || s.sameBytes.cpuUsPerRequest === null ? null : s.cpuUsPerRequest - s.sameBytes.cpuUsPerRequest;
}

function verdict(ratio: number, target: number): string {
  return `≥${target.toFixed(2)} ${ratio >= target ? 'met' : 'MISSED'}`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const numeric = (i: number) => rows.slice(1).every((row) => row[i] === '' || /^[\d.]+$/.test(row[i]));
  const line = (row: string[]) => row.map((cell, i) => (numeric(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
