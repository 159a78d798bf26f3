/** How much one test-report call reads; the definition states them, so they live apart from the parsers. */
export const MAX_REPORT_FILES = 500;
export const MAX_REPORT_BYTES = 20 * 1024 * 1024;
