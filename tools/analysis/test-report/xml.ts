/** The XML reading both report families share: one parser set-up and list-shaped elements. */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export type Element = Record<string, unknown>;

/**
 * A parsed document, or the parse error with its position. Character references are decoded
 * (pytest writes `&#10;`); DOCTYPE entities are not expanded recursively, so an entity bomb
 * stays its own size (tested).
 */
export function parseXml(text: string, listElements: readonly string[]): { document: Element } | { error: string } {
  const valid = XMLValidator.validate(text);
  if (valid !== true) return { error: `${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})` };
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    processEntities: true,
    htmlEntities: true,
    ignoreDeclaration: true,
    isArray: (name) => listElements.includes(name),
  });
  return { document: parser.parse(text) as Element };
}

/** An element that may be absent, one or many, as objects (`<skipped/>` parses as '', text-only elements as strings). */
export function elements(value: unknown): Element[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((item) => (typeof item === 'object' && item !== null ? (item as Element) : { '#text': item }));
}
