/** How much one sast-scan call reads; the definition states them, so they live apart from the scanner (and ESLint). */
export const MAX_SCANNED_FILES = 5_000;
export const MAX_FILE_BYTES = 1024 * 1024;
/** Source text whose syntax trees the taint engine keeps at once (it links calls across files at the end). */
export const MAX_TAINT_BYTES = 48 * 1024 * 1024;
