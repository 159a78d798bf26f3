/** Bounds of a history scan, stated in the tool's definition and applied by history.ts. */
export const HISTORY_LIMITS = {
  commits: 2_000,
  blobs: 20_000,
  /** Blob bytes read in all; one blob over `blobBytes` is skipped, as a large file is. */
  bytes: 256 * 1024 * 1024,
  blobBytes: 1024 * 1024,
  ms: 60_000,
} as const;
