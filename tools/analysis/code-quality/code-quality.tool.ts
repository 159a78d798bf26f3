import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { fileErrorsOutput, sourceFilesInputs } from '../../shared/scan';
import { CODE_QUALITY_EXAMPLES } from './examples';
import { COGNITIVE_LIMIT, CYCLOMATIC_LIMIT, DUPLICATION_LIMIT, GRADE_FLOORS, GRADES, MAX_SOURCE_BYTES, MAX_SOURCE_FILES } from './grading';

export type CodeQualityInput = ToolInput<typeof definition>;
export type CodeQualityOutput = ToolOutput<typeof definition>;

const location = { type: 'object', additionalProperties: false, required: ['file', 'start_line', 'end_line'], properties: { file: { type: 'string' }, start_line: { type: 'integer' }, end_line: { type: 'integer' } } } as const;
const totalAndMax = { type: 'object', additionalProperties: false, required: ['total', 'max'], properties: { total: { type: 'integer' }, max: { type: 'integer' } } } as const;
const gradeScale = `${GRADE_FLOORS.map(([grade, floor]) => `${grade} ≥ ${floor}`).join(', ')}, else F; one grade less for a function over cognitive ${COGNITIVE_LIMIT} or cyclomatic ${CYCLOMATIC_LIMIT}, one less for over ${DUPLICATION_LIMIT}% duplicated lines`;

const definition = defineTool({
  id: 'code-quality',
  name: 'Code Quality',
  category: 'analysis',
  description:
    'Measures JavaScript and TypeScript: cyclomatic and cognitive complexity per function, size, duplication (clones with both locations, by jscpd), a maintainability index and an A–F grade per file and overall, worst offenders first.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  isolated: true,
  timeout: 120,
  task_support: 'optional',
  rate_limit: 30,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      ...sourceFilesInputs('measured', MAX_SOURCE_FILES, MAX_SOURCE_BYTES),
      max_files: { type: 'integer', minimum: 1, maximum: 1000, default: 50, description: 'Most files listed, least maintainable first.' },
      max_functions: { type: 'integer', minimum: 1, maximum: 500, default: 20, description: 'Most functions listed, most complex first.' },
      max_clones: { type: 'integer', minimum: 0, maximum: 500, default: 20, description: 'Most clones listed, longest first.' },
      min_clone_lines: { type: 'integer', minimum: 3, maximum: 1000, default: 6, description: 'Shortest clone reported, in lines.' },
      min_clone_tokens: { type: 'integer', minimum: 20, maximum: 10_000, default: 50, description: 'Shortest clone reported, in tokens.' },
    },
  },
  output: {
    type: 'object',
    properties: {
      summary: {
        type: 'object',
        description: `Over every file measured. maintainability is the line-weighted mean; grade: ${gradeScale}.`,
        additionalProperties: false,
        properties: {
          files: { type: 'integer' },
          functions: { type: 'integer' },
          sloc: { type: 'integer', description: 'Lines holding code.' },
          maintainability: { type: 'number' },
          grade: { enum: [...GRADES] },
          duplicated_lines: { type: 'integer' },
          duplication_percent: { type: 'number' },
          grades: { type: 'object', description: 'Files per grade.', additionalProperties: false, properties: Object.fromEntries(GRADES.map((grade) => [grade, { type: 'integer' }])) as Record<(typeof GRADES)[number], { readonly type: 'integer' }> },
        },
      },
      files: {
        type: 'array',
        description: `Files, least maintainable first. maintainability: Visual Studio's 0–100 index (Halstead volume, cyclomatic complexity, lines) of each function and of the top-level code, weighted by lines; grade: ${gradeScale}.`,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['file', 'grade', 'maintainability', 'sloc', 'functions', 'cyclomatic', 'cognitive', 'duplicated_lines'],
          properties: {
            file: { type: 'string' },
            grade: { enum: [...GRADES] },
            maintainability: { type: 'number' },
            sloc: { type: 'integer' },
            functions: { type: 'integer' },
            cyclomatic: { ...totalAndMax, description: 'Of the whole file (top-level code counts as a function), and of its worst function.' },
            cognitive: { ...totalAndMax, description: 'Sum over its functions, and its worst function.' },
            duplicated_lines: { type: 'integer' },
          },
        },
      },
      files_truncated: { type: 'integer', description: 'Files measured but not listed (over max_files).' },
      functions: {
        type: 'array',
        description: 'Functions, methods and arrow functions, highest cognitive complexity first; each measured on its own body (a nested function is listed on its own).',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['file', 'name', 'line', 'end_line', 'lines', 'parameters', 'cyclomatic', 'cognitive'],
          properties: {
            file: { type: 'string' },
            name: { type: 'string' },
            line: { type: 'integer' },
            end_line: { type: 'integer' },
            lines: { type: 'integer' },
            parameters: { type: 'integer' },
            cyclomatic: { type: 'integer', description: '1 + branch points, as ESLint\'s complexity rule counts them.' },
            cognitive: { type: 'integer', description: 'SonarSource cognitive complexity: breaks in linear flow plus their nesting.' },
          },
        },
      },
      functions_truncated: { type: 'integer', description: 'Functions measured but not listed (over max_functions).' },
      clones: {
        type: 'array',
        description: 'Duplicated blocks, longest first; `a` is the file read first.',
        items: { type: 'object', additionalProperties: false, required: ['lines', 'a', 'b'], properties: { lines: { type: 'integer' }, a: location, b: location } },
      },
      clones_truncated: { type: 'integer', description: 'Clones found but not listed (over max_clones).' },
      errors: fileErrorsOutput('Files that could not be parsed or were too large; the others are still measured.'),
    },
    required: ['summary', 'files', 'files_truncated', 'functions', 'functions_truncated', 'clones', 'clones_truncated', 'errors'],
  },
  examples: CODE_QUALITY_EXAMPLES,
});

@Tool(definition)
export class CodeQualityTool implements ToolHandler<typeof definition> {
  async execute(input: CodeQualityInput, ctx: ToolContext<typeof definition>): Promise<CodeQualityOutput> {
    // The TypeScript parser and jscpd load on the first call, not with the catalogue.
    const { codeQuality } = await import('./quality');
    return codeQuality(input, ctx);
  }
}
