/** Manifests and Dockerfiles one iac-scan call reads; the definition states them, so they live apart from the parsers. */
export const MAX_SCANNED_FILES = 2_000;
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
export const MAX_ERRORS_LISTED = 100;
