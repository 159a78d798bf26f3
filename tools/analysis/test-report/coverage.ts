/** Line, branch and function coverage per file, from lcov tracefiles and Cobertura XML. */
import lcovParser from '@friedemannsommer/lcov-parser';
import { elements as list, type Element } from './xml';

export interface Counter {
  covered: number;
  total: number;
}

export interface FileCoverage {
  file: string;
  lines: Counter;
  branches: Counter;
  /** Cobertura reports often carry no methods: then unknown. */
  functions: Counter | null;
  /** Instrumented lines never hit, ascending. */
  uncovered: number[];
}

/** The XML element names of Cobertura read as lists even when one is present. */
export const COBERTURA_LIST_ELEMENTS = ['package', 'class', 'line', 'method'];

/** The part of the parser's SectionSummary read here (its types do not resolve under CommonJS resolution). */
interface LcovSection {
  path: string;
  lines: LcovSummary;
  branches: LcovSummary;
  functions: LcovSummary;
}
interface LcovSummary {
  hit: number;
  instrumented: number;
  details: Array<{ line: number; hit: number }>;
}

export function looksLikeLcov(text: string): boolean {
  return /^(?:TN|SF):/m.test(text.slice(0, 4096)) && /^end_of_record\s*$/m.test(text);
}

export async function lcovCoverage(text: string): Promise<FileCoverage[]> {
  const sections = (await lcovParser({ from: text })) as LcovSection[];
  return sections.map((section) => ({
    file: section.path,
    lines: counted(section.lines),
    branches: counted(section.branches),
    functions: counted(section.functions),
    uncovered: section.lines.details.filter((line) => line.hit === 0).map((line) => line.line).sort((a, b) => a - b),
  }));
}

/** Counts from the records themselves; the LF/LH-style summary lines only when there are none (some writers omit one or the other). */
function counted(summary: LcovSummary): Counter {
  if (summary.details.length === 0) return { covered: summary.hit, total: summary.instrumented };
  return { covered: summary.details.filter((entry) => entry.hit > 0).length, total: summary.details.length };
}

/** Files of a parsed Cobertura document, or undefined when its root is not `<coverage>`. */
export function coberturaCoverage(document: Element): FileCoverage[] | undefined {
  const root = document.coverage as Element | undefined;
  if (root === undefined || typeof root !== 'object') return undefined;
  const byFile = new Map<string, FileCoverage>();
  for (const pkg of list((root.packages as Element | undefined)?.package)) {
    for (const cls of list((pkg.classes as Element | undefined)?.class)) {
      const file = String(cls.filename ?? cls.name ?? '');
      const entry = byFile.get(file) ?? { file, lines: { covered: 0, total: 0 }, branches: { covered: 0, total: 0 }, functions: null, uncovered: [] };
      byFile.set(file, entry);
      for (const line of list((cls.lines as Element | undefined)?.line)) {
        const number = Number(line.number);
        const hit = Number(line.hits) > 0;
        entry.lines.total += 1;
        if (hit) entry.lines.covered += 1;
        else entry.uncovered.push(number);
        const conditions = /\((\d+)\/(\d+)\)/.exec(String(line['condition-coverage'] ?? ''));
        if (line.branch === 'true' || line.branch === true) {
          entry.branches.covered += conditions ? Number(conditions[1]) : 0;
          entry.branches.total += conditions ? Number(conditions[2]) : 0;
        }
      }
      const methods = list((cls.methods as Element | undefined)?.method);
      if (methods.length > 0) {
        entry.functions ??= { covered: 0, total: 0 };
        entry.functions.total += methods.length;
        entry.functions.covered += methods.filter((method) => list((method.lines as Element | undefined)?.line).some((line) => Number(line.hits) > 0)).length;
      }
    }
  }
  for (const entry of byFile.values()) entry.uncovered.sort((a, b) => a - b);
  return [...byFile.values()];
}
