import type { ToolExample } from '@tos/sdk';

/** Examples run against the fixture workspace of the example world (test/support/example-world/code.part.ts). */
export const CODE_QUALITY_EXAMPLES: ToolExample[] = [
  {
    name: 'A small TypeScript project with a copied export function: the clone costs both files a grade',
    input: { path: 'code/quality', max_functions: 3 },
    output: {
      summary: {
        files: 5,
        functions: 10,
        sloc: 84,
        maintainability: 62.83,
        grade: 'C',
        duplicated_lines: 18,
        duplication_percent: 21.43,
        grades: { A: 1, B: 2, C: 2, D: 0, F: 0 }
      },
      files: [
        {
          file: 'code/quality/src/orders/export-csv.ts',
          grade: 'C',
          maintainability: 57.92,
          sloc: 15,
          functions: 1,
          cyclomatic: { total: 5, max: 5 },
          cognitive: { total: 9, max: 9 },
          duplicated_lines: 9
        },
        {
          file: 'code/quality/src/orders/export-tsv.ts',
          grade: 'C',
          maintainability: 57.92,
          sloc: 15,
          functions: 1,
          cyclomatic: { total: 5, max: 5 },
          cognitive: { total: 9, max: 9 },
          duplicated_lines: 9
        },
        {
          file: 'code/quality/src/primes.ts',
          grade: 'B',
          maintainability: 61.82,
          sloc: 24,
          functions: 2,
          cyclomatic: { total: 7, max: 4 },
          cognitive: { total: 8, max: 7 },
          duplicated_lines: 0
        },
        {
          file: 'code/quality/src/shipping.ts',
          grade: 'B',
          maintainability: 64.26,
          sloc: 17,
          functions: 3,
          cyclomatic: { total: 8, max: 7 },
          cognitive: { total: 8, max: 7 },
          duplicated_lines: 0
        },
        {
          file: 'code/quality/src/format.js',
          grade: 'A',
          maintainability: 74.17,
          sloc: 13,
          functions: 3,
          cyclomatic: { total: 2, max: 2 },
          cognitive: { total: 0, max: 0 },
          duplicated_lines: 0
        }
      ],
      files_truncated: 0,
      functions: [
        {
          file: 'code/quality/src/orders/export-csv.ts',
          name: 'exportCsv',
          line: 3,
          end_line: 16,
          lines: 14,
          parameters: 1,
          cyclomatic: 5,
          cognitive: 9
        },
        {
          file: 'code/quality/src/orders/export-tsv.ts',
          name: 'exportTsv',
          line: 3,
          end_line: 16,
          lines: 14,
          parameters: 1,
          cyclomatic: 5,
          cognitive: 9
        },
        {
          file: 'code/quality/src/shipping.ts',
          name: 'shippingCost',
          line: 9,
          end_line: 17,
          lines: 9,
          parameters: 1,
          cyclomatic: 7,
          cognitive: 7
        }
      ],
      functions_truncated: 7,
      clones: [
        {
          lines: 9,
          a: { file: 'code/quality/src/orders/export-csv.ts', start_line: 4, end_line: 12 },
          b: { file: 'code/quality/src/orders/export-tsv.ts', start_line: 4, end_line: 12 }
        }
      ],
      clones_truncated: 0,
      errors: []
    },
  },
  {
    name: 'One file: the two examples of the SonarSource paper on cognitive complexity, equal in cyclomatic complexity (4), far apart in cognitive (7 and 1)',
    input: { path: 'code/quality/src', files: ['primes.ts'] },
    output: {
      summary: {
        files: 1,
        functions: 2,
        sloc: 24,
        maintainability: 61.82,
        grade: 'B',
        duplicated_lines: 0,
        duplication_percent: 0,
        grades: { A: 0, B: 1, C: 0, D: 0, F: 0 }
      },
      files: [
        {
          file: 'code/quality/src/primes.ts',
          grade: 'B',
          maintainability: 61.82,
          sloc: 24,
          functions: 2,
          cyclomatic: { total: 7, max: 4 },
          cognitive: { total: 8, max: 7 },
          duplicated_lines: 0
        }
      ],
      files_truncated: 0,
      functions: [
        {
          file: 'code/quality/src/primes.ts',
          name: 'sumOfPrimes',
          line: 3,
          end_line: 14,
          lines: 12,
          parameters: 1,
          cyclomatic: 4,
          cognitive: 7
        },
        {
          file: 'code/quality/src/primes.ts',
          name: 'getWords',
          line: 16,
          end_line: 27,
          lines: 12,
          parameters: 1,
          cyclomatic: 4,
          cognitive: 1
        }
      ],
      functions_truncated: 0,
      clones: [],
      clones_truncated: 0,
      errors: []
    },
  },
];
