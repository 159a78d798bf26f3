/** A file whose first bytes hold a NUL is binary (the rule git and grep use). */
const BINARY_SNIFF_CHARS = 8_000;

export function isBinary(text: string): boolean {
  return text.slice(0, BINARY_SNIFF_CHARS).includes('\0');
}
