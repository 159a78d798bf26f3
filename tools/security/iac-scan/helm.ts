/**
 * Helm charts: a directory with Chart.yaml; its templates/ rendered with the chart's own
 * values.yaml (as `helm template` would with no overrides) into manifests for the Kubernetes
 * rules. A subchart under charts/ is a chart of its own, rendered with its own defaults (the
 * parent's overrides and packaged .tgz dependencies are not applied).
 */
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { HELM_FUNCTIONS } from './helm-functions';
import { Renderer } from './go-template';

/** Files of one chart by path relative to its root: `Chart.yaml`, `values.yaml`, `templates/…`. */
export type ChartFiles = Record<string, string>;

export interface RenderedChart {
  /** One per rendered template file, named after it; `lines[k]` is the template line that wrote line k + 1. */
  manifests: Array<{ file: string; text: string; lines: number[] }>;
  errors: Array<{ file: string; message: string }>;
}

/** The chart root a file belongs to (its nearest ancestor with a Chart.yaml), if it is one of the files rendering reads. */
export function chartOf(file: string, roots: ReadonlySet<string>): string | undefined {
  for (let directory = path.posix.dirname(file); ; directory = path.posix.dirname(directory)) {
    if (roots.has(directory)) {
      const relative = directory === '.' ? file : file.slice(directory.length + 1);
      return relative === 'Chart.yaml' || relative === 'values.yaml' || relative.startsWith('templates/') ? directory : undefined;
    }
    if (directory === '.' || directory === '/' || directory === '') return undefined;
  }
}

export function renderChart(root: string, files: ChartFiles): RenderedChart {
  const result: RenderedChart = { manifests: [], errors: [] };
  const at = (relative: string) => (root === '.' ? relative : `${root}/${relative}`);
  let chart: Record<string, unknown>;
  let values: unknown;
  try {
    chart = (parseYaml(files['Chart.yaml'] ?? '') ?? {}) as Record<string, unknown>;
    values = parseYaml(files['values.yaml'] ?? '') ?? {};
  } catch (error) {
    result.errors.push({ file: at('values.yaml'), message: `Chart not rendered: ${(error as Error).message.split('\n')[0]}` });
    return result;
  }
  const renderer = new Renderer(HELM_FUNCTIONS);
  const templates = Object.keys(files)
    .filter((name) => name.startsWith('templates/'))
    .sort();
  const parsed = new Map<string, ReturnType<Renderer['parse']>>();
  // Every file's `define`s are known before any template runs, as in Helm.
  for (const name of templates) {
    try {
      parsed.set(name, renderer.parse(files[name], name));
    } catch (error) {
      result.errors.push({ file: at(name), message: `Template not rendered: ${(error as Error).message}` });
    }
  }
  const context = {
    Values: values,
    Chart: Object.fromEntries(Object.entries(chart).map(([key, value]) => [key.charAt(0).toUpperCase() + key.slice(1), value])),
    Release: { Name: 'release-name', Namespace: 'default', Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1 },
    Capabilities: { KubeVersion: { Version: 'v1.30.0', Major: '1', Minor: '30', GitVersion: 'v1.30.0' }, APIVersions: { Has: () => true }, HelmVersion: { Version: 'v3.15.0' } },
    Files: { Get: () => '', Glob: () => ({}), AsConfig: () => '', AsSecrets: () => '', Lines: () => [] },
  };
  for (const [name, nodes] of parsed) {
    // _helpers.tpl and the like only define; NOTES.txt is printed to the user, not applied.
    const base = path.posix.basename(name);
    if (base.startsWith('_') || !/\.(?:ya?ml|json)$/i.test(base)) continue;
    try {
      const { text, lines } = renderer.execute(nodes, { ...context, Template: { Name: `${String(chart.name ?? 'chart')}/${name}`, BasePath: `${String(chart.name ?? 'chart')}/templates` } });
      if (text.trim() !== '') result.manifests.push({ file: at(name), text, lines });
    } catch (error) {
      result.errors.push({ file: at(name), message: `Template not rendered: ${(error as Error).message}` });
    }
  }
  return result;
}
