/** The signature of an error message: its variable parts (ids, numbers, paths, …) masked as `<*>`. */

/** Only the start of a very long message is mined: enough to tell templates apart. */
const MAX_TEMPLATE_SOURCE_CHARS = 1_000;
const MAX_SIGNATURE_CHARS = 300;

/**
 * Variable parts of a message, masked as `<*>` in this order (earlier rules win). Patterns
 * start only at token boundaries so that they stay linear on long tokens.
 */
const VARIABLE_TOKENS: readonly RegExp[] = [
  /"(?:[^"\\]|\\.)*"|(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)/g, // quoted strings (not apostrophes)
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, // URLs
  /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, // emails
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, // UUIDs
  /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, // IPv4, with port
  /(?<![\w:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])/gi, // IPv6 (and clock times)
  /(?<![\w/.~-])(?:~|\.{1,2})?(?:\/[\w.~%@+-]+)+\/?/g, // file and URL paths
];
const HEX_ID = /^(?:0x)?[0-9a-f]{8,}$/i;

export function templateOf(message: string): string {
  let template = message.slice(0, MAX_TEMPLATE_SOURCE_CHARS);
  for (const pattern of VARIABLE_TOKENS) template = template.replace(pattern, '<*>');
  // Then every remaining word with a digit (numbers, ids, sizes, durations) and hex ids.
  template = template.replace(/[\w.-]+/g, (word) => (/\d/.test(word) || HEX_ID.test(word) ? '<*>' : word));
  return template.replace(/\s+/g, ' ').trim().slice(0, MAX_SIGNATURE_CHARS);
}
