import type { ToolExample } from '@tos/sdk';

/** Examples run against the fixture workspace of the example world (test/support/example-world/code.part.ts). */
export const TEST_REPORT_EXAMPLES: ToolExample[] = [
  {
    name: 'Maven Surefire reports: a failure, an error, a skip and a test that passed on its rerun',
    input: { path: 'code/reports/maven', slowest: 2, trace_lines: 3 },
    output: {
      reports: [
        { file: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml', format: 'junit', entries: 5 },
        { file: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.PriceFormatterTest.xml', format: 'junit', entries: 2 }
      ],
      totals: { tests: 7, passed: 4, failed: 1, errors: 1, skipped: 1, flaky: 1, suites: 2, duration_ms: 2362 },
      failures: [
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'appliesPercentageDiscount',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          kind: 'failure',
          type: 'org.opentest4j.AssertionFailedError',
          message: 'expected: <90.00> but was: <89.99>',
          trace: 'org.opentest4j.AssertionFailedError: expected: <90.00> but was: <89.99>\n' +
            '\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n' +
            '\tat org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)\n' +
            '… 22 more line(s)',
          duration_ms: 104,
          file: null,
          line: null
        },
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'checkoutReservesStock',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          kind: 'error',
          type: 'java.net.ConnectException',
          message: 'Connection refused: localhost/127.0.0.1:5432',
          trace: 'java.net.ConnectException: Connection refused: localhost/127.0.0.1:5432\n' +
            '\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n' +
            '\tat com.acme.shop.StockClient.reserve(StockClient.java:77)\n' +
            '… 1 more line(s)',
          duration_ms: 1803,
          file: null,
          line: null
        }
      ],
      failures_truncated: 0,
      skipped: [
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'mergesGuestCart',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          message: 'Guest carts are disabled in this build'
        }
      ],
      slowest: [
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'checkoutReservesStock',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          duration_ms: 1803
        },
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'removesLastItem',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          duration_ms: 221
        }
      ],
      flaky: [
        {
          suite: 'com.acme.shop.CartServiceTest',
          name: 'removesLastItem',
          report: 'code/reports/maven/target/surefire-reports/TEST-com.acme.shop.CartServiceTest.xml',
          attempts: 2,
          failed_attempts: 1,
          outcome: 'passed'
        }
      ],
      coverage: null,
      errors: []
    },
  },
  {
    name: 'An lcov tracefile sent inline',
    input: { content: 'SF:src/slugify.ts\nFN:1,slugify\nFNDA:12,slugify\nDA:1,12\nDA:2,12\nDA:3,0\nDA:4,12\nLF:4\nLH:3\nBRDA:2,0,0,12\nBRDA:2,0,1,0\nBRF:2\nBRH:1\nend_of_record\n' },
    output: {
      reports: [ { file: '(content)', format: 'lcov', entries: 1 } ],
      totals: { tests: 0, passed: 0, failed: 0, errors: 0, skipped: 0, flaky: 0, suites: 0, duration_ms: 0 },
      failures: [],
      failures_truncated: 0,
      skipped: [],
      slowest: [],
      flaky: [],
      coverage: {
        lines: { covered: 3, total: 4, percent: 75 },
        branches: { covered: 1, total: 2, percent: 50 },
        functions: { covered: 1, total: 1, percent: 100 },
        files: [
          {
            file: 'src/slugify.ts',
            lines: { covered: 3, total: 4, percent: 75 },
            branches: { covered: 1, total: 2, percent: 50 },
            functions: { covered: 1, total: 1, percent: 100 },
            uncovered_lines: '3'
          }
        ],
        files_truncated: 0
      },
      errors: []
    },
  },
];
