/** How much one sast-scan call reads; the definition states them, so they live apart from the scanner (and ESLint). */
export const MAX_SCANNED_FILES = 5_000;
export const MAX_FILE_BYTES = 1024 * 1024;
