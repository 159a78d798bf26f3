/**
 * YAML documents with their line positions, for the formats written in YAML (Kubernetes,
 * Compose, CloudFormation): each document as plain values and a way back to the line of any path.
 */
import { isSeq, LineCounter, parseAllDocuments, type Document } from 'yaml';

export type Path = ReadonlyArray<string | number>;
export type Json = Record<string, unknown>;

export interface YamlDocument {
  root: unknown;
  /** 1-based line of the key at `path`, or of its nearest ancestor present in the document. */
  lineAt(path: Path): number;
}

export interface YamlFile {
  documents: YamlDocument[];
  /** yaml's messages, which already say where (line and column). */
  errors: string[];
}

/** `transform` rewrites each document's nodes before they become values (CloudFormation's short tags). */
export function parseYamlFile(text: string, transform?: (document: Document) => void): YamlFile {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, uniqueKeys: false });
  const result: YamlFile = { documents: [], errors: [] };
  for (const document of Array.isArray(parsed) ? parsed : [parsed]) {
    if (document.errors.length > 0) {
      result.errors.push(...document.errors.map((error) => error.message.split('\n')[0].replace(/:$/, '')));
      continue;
    }
    transform?.(document);
    result.documents.push({ root: document.toJS({ maxAliasCount: 100 }) as unknown, lineAt: (path) => lineOf(document, path, lineCounter) });
  }
  return result;
}

function lineOf(document: Document, path: Path, lineCounter: LineCounter): number {
  for (let length = path.length; length >= 0; length -= 1) {
    const node = document.getIn(path.slice(0, length), true) as { range?: [number, number, number] } | undefined;
    const parent = length > 0 ? (document.getIn(path.slice(0, length - 1), true) as unknown) : undefined;
    // For a map entry, point at its key (where the field is written), not at its value.
    const keyOffset = length > 0 && !isSeq(parent) ? keyStart(parent, path[length - 1]) : undefined;
    const offset = keyOffset ?? node?.range?.[0];
    if (offset !== undefined) return lineCounter.linePos(offset).line;
  }
  return 1;
}

function keyStart(map: unknown, key: string | number): number | undefined {
  const items = (map as { items?: Array<{ key?: { value?: unknown; range?: [number, number, number] } }> } | undefined)?.items;
  return items?.find((pair) => pair.key?.value === key)?.key?.range?.[0];
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function valueAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((current, step) => (isObject(current) || Array.isArray(current) ? (current as Record<string | number, unknown>)[step] : undefined), value);
}
