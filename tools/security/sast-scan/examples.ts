import type { ToolExample } from '@tos/sdk';
import { SAST_RULE_IDS, SAST_RULES } from './rules';

const RECOMMENDED = SAST_RULE_IDS.filter((id) => SAST_RULES[id].recommended);

/** Examples run against the fixture workspace of the example world (test/support/example-world/code.part.ts). */
export const SAST_SCAN_EXAMPLES: ToolExample[] = [
  {
    name: 'Browser code with XSS sinks, a postMessage to any origin and weak randomness (medium and worse)',
    input: { path: 'code/sast/src/ui', min_severity: 'medium' },
    output: {
      findings: [
        {
          rule: '@microsoft/sdl/no-inner-html',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 2,
          column: 3,
          end_line: 2,
          end_column: 60,
          message: 'Do not write to DOM directly using innerHTML/outerHTML property'
        },
        {
          rule: 'no-unsanitized/property',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 2,
          column: 3,
          end_line: 2,
          end_column: 60,
          message: "Unsafe assignment to innerHTML (Variable 'comment' declared as function parameter, which is considered unsafe. 'FunctionDeclaration' at 1:7)"
        },
        {
          rule: '@microsoft/sdl/no-document-write',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 6,
          column: 3,
          end_line: 6,
          end_column: 23,
          message: 'Do not write to DOM directly using document.write or document.writeln methods'
        },
        {
          rule: 'no-unsanitized/method',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 6,
          column: 3,
          end_line: 6,
          end_column: 23,
          message: "Unsafe call to document.write for argument 0 (Variable 'html' declared as function parameter, which is considered unsafe. 'FunctionDeclaration' at 5:7)"
        },
        {
          rule: '@microsoft/sdl/no-inner-html',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 7,
          column: 3,
          end_line: 7,
          end_column: 35,
          message: 'Do not write to DOM using insertAdjacentHTML method'
        },
        {
          rule: 'no-unsanitized/method',
          severity: 'high',
          file: 'code/sast/src/ui/render.ts',
          line: 7,
          column: 3,
          end_line: 7,
          end_column: 54,
          message: "Unsafe call to document.body.insertAdjacentHTML for argument 1 (Variable 'html' declared as function parameter, which is considered unsafe. 'FunctionDeclaration' at 5:7)"
        },
        {
          rule: '@microsoft/sdl/no-postmessage-star-origin',
          severity: 'medium',
          file: 'code/sast/src/ui/render.ts',
          line: 11,
          column: 3,
          end_line: 11,
          end_column: 40,
          message: 'Do not use * as target origin when sending data to other windows'
        },
        {
          rule: '@microsoft/sdl/no-unsafe-alloc',
          severity: 'medium',
          file: 'code/sast/src/ui/render.ts',
          line: 15,
          column: 10,
          end_line: 15,
          end_column: 28,
          message: 'Do not allocate uninitialized buffers in Node.js'
        },
        {
          rule: '@microsoft/sdl/no-insecure-random',
          severity: 'medium',
          file: 'code/sast/src/ui/render.ts',
          line: 19,
          column: 10,
          end_line: 19,
          end_column: 21,
          message: 'Do not use pseudo-random number generators for generating secret values such as tokens, passwords or keys.'
        }
      ],
      count: 9,
      total: 9,
      truncated: false,
      summary: { critical: 0, high: 6, medium: 3, low: 0 },
      files_scanned: 2,
      rules: RECOMMENDED,
      errors: []
    },
  },
  {
    name: 'Two chosen rules over a small Express app, with the SARIF log for code scanning',
    input: { path: 'code/sast', rules: 'security/detect-child-process, no-eval', sarif: true },
    output: {
      findings: [
        {
          rule: 'security/detect-child-process',
          severity: 'high',
          file: 'code/sast/src/server.js',
          line: 10,
          column: 3,
          end_line: 10,
          end_column: 71,
          message: 'Found child_process.exec() with non Literal first argument'
        },
        {
          rule: 'no-eval',
          severity: 'high',
          file: 'code/sast/src/server.js',
          line: 14,
          column: 19,
          end_line: 14,
          end_column: 23,
          message: 'eval can be harmful.'
        }
      ],
      count: 2,
      total: 2,
      truncated: false,
      summary: { critical: 0, high: 2, medium: 0, low: 0 },
      files_scanned: 3,
      rules: [ 'security/detect-child-process', 'no-eval' ],
      errors: [],
      sarif: {
        '$schema': 'https://json.schemastore.org/sarif-2.1.0.json',
        version: '2.1.0',
        runs: [
          {
            tool: {
              driver: {
                name: 'sast-scan',
                semanticVersion: '1.0.0',
                rules: [
                  {
                    id: 'security/detect-child-process',
                    shortDescription: { text: 'Detects instances of "child_process" & non-literal "exec()" calls.' },
                    helpUri: 'https://github.com/eslint-community/eslint-plugin-security/blob/main/docs/rules/detect-child-process.md',
                    defaultConfiguration: { level: 'error' },
                    properties: { tags: [ 'security', 'external/cwe/cwe-78' ], 'security-severity': '8.0' }
                  },
                  {
                    id: 'no-eval',
                    shortDescription: { text: 'Disallow the use of `eval()`' },
                    helpUri: 'https://eslint.org/docs/latest/rules/no-eval',
                    defaultConfiguration: { level: 'error' },
                    properties: { tags: [ 'security', 'external/cwe/cwe-95' ], 'security-severity': '8.0' }
                  }
                ]
              }
            },
            columnKind: 'utf16CodeUnits',
            results: [
              {
                ruleId: 'security/detect-child-process',
                ruleIndex: 0,
                level: 'error',
                message: { text: 'Found child_process.exec() with non Literal first argument' },
                locations: [
                  {
                    physicalLocation: {
                      artifactLocation: { uri: 'code/sast/src/server.js' },
                      region: { startLine: 10, startColumn: 3, endLine: 10, endColumn: 71 }
                    }
                  }
                ]
              },
              {
                ruleId: 'no-eval',
                ruleIndex: 1,
                level: 'error',
                message: { text: 'eval can be harmful.' },
                locations: [
                  {
                    physicalLocation: {
                      artifactLocation: { uri: 'code/sast/src/server.js' },
                      region: { startLine: 14, startColumn: 19, endLine: 14, endColumn: 23 }
                    }
                  }
                ]
              }
            ]
          }
        ]
      }
    },
  },
  {
    name: 'Data flow over a small Express app: request data into a shell, eval and fs, each finding with its path from source to sink',
    input: { path: 'code/sast', rules: 'taint/command-injection, taint/code-injection, taint/path-traversal' },
    output: {
      findings: [
        {
          rule: 'taint/command-injection',
          severity: 'critical',
          file: 'code/sast/src/server.js',
          line: 10,
          column: 3,
          end_line: 10,
          end_column: 71,
          message: 'child_process.exec() receives req.query.file (code/sast/src/server.js:10) — Request data or command-line arguments reach a shell command (child_process exec, or spawn/execFile with a shell).',
          flow: [
            { file: 'code/sast/src/server.js', line: 10, column: 17, note: 'source: req.query.file' },
            { file: 'code/sast/src/server.js', line: 10, column: 3, note: 'sink: child_process.exec()' }
          ]
        },
        {
          rule: 'taint/code-injection',
          severity: 'critical',
          file: 'code/sast/src/server.js',
          line: 14,
          column: 19,
          end_line: 14,
          end_column: 45,
          message: 'eval() receives req.query.expression (code/sast/src/server.js:14) — Request data or command-line arguments reach code evaluation (eval, Function, vm, string timers, mathjs evaluate).',
          flow: [ { file: 'code/sast/src/server.js', line: 14, column: 24, note: 'source: req.query.expression' }, { file: 'code/sast/src/server.js', line: 14, column: 19, note: 'sink: eval()' } ]
        },
        {
          rule: 'taint/path-traversal',
          severity: 'high',
          file: 'code/sast/src/server.js',
          line: 18,
          column: 3,
          end_line: 18,
          end_column: 64,
          message: 'fs.readFile() receives req.params.name (code/sast/src/server.js:18) — Request data or command-line arguments name a file for fs, res.sendFile or res.download without basename or a containment check.',
          flow: [ { file: 'code/sast/src/server.js', line: 18, column: 15, note: 'source: req.params.name' }, { file: 'code/sast/src/server.js', line: 18, column: 3, note: 'sink: fs.readFile()' } ]
        }
      ],
      count: 3,
      total: 3,
      truncated: false,
      summary: { critical: 2, high: 1, medium: 0, low: 0 },
      files_scanned: 3,
      rules: [ 'taint/command-injection', 'taint/code-injection', 'taint/path-traversal' ],
      errors: []
    },
  },
  {
    name: 'Only the files of pull request acme/widgets#1 (it changes none under code/sast: nothing to scan)',
    input: { path: 'code/sast', pr: 1, owner: 'acme', repo: 'widgets' },
    output: { findings: [], count: 0, total: 0, truncated: false, summary: { critical: 0, high: 0, medium: 0, low: 0 }, files_scanned: 0, rules: RECOMMENDED, errors: [], pull_request: { number: 1, changed_files: 3 } },
  },
];
