/** code-quality's work: measure every JavaScript/TypeScript file under a path, find clones, grade. */
import * as path from 'node:path';
import { ToolError, type ToolContext } from '@tos/sdk';
import { eachFileText, listSourceFiles, type FileErrors } from '../../shared/scan';
import { fileMetrics, type CodeUnit, type FunctionMetrics } from './complexity';
import { CloneFinder, type Clone, type CloneFormat } from './duplication';
import type { CodeQualityInput, CodeQualityOutput } from './code-quality.tool';
import { COGNITIVE_LIMIT, CYCLOMATIC_LIMIT, DUPLICATION_LIMIT, GRADE_FLOORS, GRADES, MAX_SOURCE_BYTES, MAX_SOURCE_FILES, type Grade } from './grading';

const MAX_ERRORS_LISTED = 50;

interface FileReport {
  file: string;
  grade: Grade;
  maintainability: number;
  sloc: number;
  functions: number;
  cyclomatic: { total: number; max: number };
  cognitive: { total: number; max: number };
  duplicated_lines: number;
}

interface Measured {
  file: string;
  sloc: number;
  units: CodeUnit[];
  cyclomatic: number;
  functions: FunctionMetrics[];
}

export async function codeQuality(input: CodeQualityInput, ctx: ToolContext): Promise<CodeQualityOutput> {
  const sources = await listSourceFiles(ctx, input, MAX_SOURCE_FILES);
  if (sources.length === 0) throw ToolError.invalidInput('path', 'a path holding JavaScript or TypeScript sources', input.path, `No .js/.jsx/.mjs/.cjs/.ts/.tsx/.mts/.cts files under '${input.path}'`);
  const finder = new CloneFinder({ minLines: input.min_clone_lines, minTokens: input.min_clone_tokens });
  const measured: Measured[] = [];
  const errors: FileErrors = [];
  for await (const { file, text } of eachFileText(ctx, sources, MAX_SOURCE_BYTES, errors, 'measured')) {
    const extension = path.posix.extname(file.path).toLowerCase();
    try {
      const metrics = fileMetrics(text, extension.endsWith('x') || extension.endsWith('js'));
      measured.push({ file: file.path, ...metrics });
    } catch (error) {
      errors.push({ file: file.path, message: `Not parsed: ${(error as Error).message.split('\n')[0]}` });
      continue;
    }
    await finder.add(file.path, text, cloneFormat(extension));
  }
  if (measured.length === 0) throw ToolError.invalidInput('path', 'parseable JavaScript or TypeScript', input.path, `No file under '${input.path}' could be parsed; ${errors[0]?.file}: ${errors[0]?.message}`);
  ctx.progress(100, `${measured.length} file(s) measured`);
  return summarise(input, measured, finder, errors);
}

function cloneFormat(extension: string): CloneFormat {
  if (extension === '.tsx') return 'tsx';
  if (extension === '.jsx') return 'jsx';
  return extension.includes('t') ? 'typescript' : 'javascript';
}

function summarise(input: CodeQualityInput, measured: Measured[], finder: CloneFinder, errors: FileErrors): CodeQualityOutput {
  const duplicated = finder.duplicatedLines();
  const files = measured.map((entry) => fileReport(entry, duplicated.get(entry.file) ?? 0));
  const sloc = files.reduce((sum, entry) => sum + entry.sloc, 0);
  const duplicatedLines = files.reduce((sum, entry) => sum + entry.duplicated_lines, 0);
  const maintainability = round(files.reduce((sum, entry) => sum + entry.maintainability * Math.max(entry.sloc, 1), 0) / files.reduce((sum, entry) => sum + Math.max(entry.sloc, 1), 0));
  const duplicationPercent = sloc === 0 ? 0 : round((duplicatedLines / sloc) * 100);
  const functions = measured
    .flatMap((entry) => entry.functions.map((fn) => ({ file: entry.file, ...fn })))
    .sort((a, b) => b.cognitive - a.cognitive || b.cyclomatic - a.cyclomatic || b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  const worstFiles = [...files].sort((a, b) => a.maintainability - b.maintainability || a.file.localeCompare(b.file));
  const clones = [...finder.clones].sort((a, b) => b.lines - a.lines || a.a.file.localeCompare(b.a.file) || a.a.start_line - b.a.start_line);
  return {
    summary: {
      files: files.length,
      functions: functions.length,
      sloc,
      maintainability,
      grade: downgrade(gradeOf(maintainability), duplicationPercent > DUPLICATION_LIMIT ? 1 : 0),
      duplicated_lines: duplicatedLines,
      duplication_percent: duplicationPercent,
      grades: Object.fromEntries(GRADES.map((grade) => [grade, files.filter((entry) => entry.grade === grade).length])) as Record<Grade, number>,
    },
    files: worstFiles.slice(0, input.max_files),
    files_truncated: Math.max(0, files.length - input.max_files),
    functions: functions.slice(0, input.max_functions),
    functions_truncated: Math.max(0, functions.length - input.max_functions),
    clones: clones.slice(0, input.max_clones),
    clones_truncated: Math.max(0, clones.length - input.max_clones),
    errors: errors.slice(0, MAX_ERRORS_LISTED),
  };
}

function fileReport(entry: Measured, duplicatedLines: number): FileReport {
  const cyclomatic = entry.functions.map((fn) => fn.cyclomatic);
  const cognitive = entry.functions.map((fn) => fn.cognitive);
  const maintainability = weightedMaintainability(entry.units);
  const penalties = (cognitive.some((value) => value > COGNITIVE_LIMIT) || cyclomatic.some((value) => value > CYCLOMATIC_LIMIT) ? 1 : 0) + (entry.sloc > 0 && (duplicatedLines / entry.sloc) * 100 > DUPLICATION_LIMIT ? 1 : 0);
  return {
    file: entry.file,
    grade: downgrade(gradeOf(maintainability), penalties),
    maintainability,
    sloc: entry.sloc,
    functions: entry.functions.length,
    cyclomatic: { total: entry.cyclomatic, max: Math.max(0, ...cyclomatic) },
    cognitive: { total: cognitive.reduce((sum, value) => sum + value, 0), max: Math.max(0, ...cognitive) },
    duplicated_lines: duplicatedLines,
  };
}

/**
 * A file's maintainability: the index of each unit (function, top-level code) weighted by its
 * lines, as Visual Studio averages members — so a long file of small functions is not an F.
 */
function weightedMaintainability(units: CodeUnit[]): number {
  const lines = units.reduce((sum, unit) => sum + unit.sloc, 0);
  if (lines === 0) return 100;
  return round(units.reduce((sum, unit) => sum + maintainabilityIndex(unit) * unit.sloc, 0) / lines);
}

/** The maintainability index on Visual Studio's 0–100 scale, from Halstead volume, cyclomatic complexity and lines of code. */
function maintainabilityIndex(unit: CodeUnit): number {
  const raw = 171 - 5.2 * Math.log(Math.max(unit.halsteadVolume, 1)) - 0.23 * unit.cyclomatic - 16.2 * Math.log(Math.max(unit.sloc, 1));
  return Math.min(100, Math.max(0, (raw * 100) / 171));
}

function gradeOf(maintainability: number): Grade {
  return GRADE_FLOORS.find(([, floor]) => maintainability >= floor)?.[0] ?? 'F';
}

function downgrade(grade: Grade, steps: number): Grade {
  return GRADES[Math.min(GRADES.length - 1, GRADES.indexOf(grade) + steps)];
}

const round = (value: number) => Math.round(value * 100) / 100;
