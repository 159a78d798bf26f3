/** A multi-document YAML manifest as the objects to apply, or INVALID_INPUT saying which document is wrong and where. */
import { LineCounter, parseAllDocuments } from 'yaml';
import { ToolError } from '@tos/sdk';
import type { KubernetesObject } from '../../integrations/kubernetes';
import { MAX_OBJECTS } from './limits';

export interface ManifestObject {
  object: KubernetesObject & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
  /** 1-based document number, for messages. */
  document: number;
}

export function parseManifest(text: string): ManifestObject[] {
  const lineCounter = new LineCounter();
  const objects: ManifestObject[] = [];
  parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false }).forEach((doc, index) => {
    const document = index + 1;
    const error = doc.errors[0];
    if (error) {
      const line = lineCounter.linePos(error.pos[0]).line;
      throw invalid(`document ${document} is not valid YAML (line ${line}): ${error.message.split('\n')[0]}`, { document, line });
    }
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (value === null || value === undefined) return; // an empty document (a trailing ---)
    const items = isObject(value) && value.kind === 'List' && Array.isArray(value.items) ? (value.items as unknown[]) : [value];
    for (const item of items) objects.push({ object: checked(item, document), document });
  });
  if (objects.length === 0) throw invalid('the manifest holds no object', {});
  if (objects.length > MAX_OBJECTS) throw invalid(`the manifest holds ${objects.length} objects; at most ${MAX_OBJECTS} are applied in one call`, {});
  return objects;
}

function checked(value: unknown, document: number): ManifestObject['object'] {
  if (!isObject(value)) throw invalid(`document ${document} is not an object`, { document });
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') throw invalid(`document ${document} needs apiVersion and kind`, { document });
  if (!isObject(metadata) || typeof metadata.name !== 'string' || metadata.name === '') throw invalid(`document ${document} (${kind}) needs metadata.name`, { document });
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') throw invalid(`document ${document} (${kind} ${metadata.name}): metadata.namespace must be a string`, { document });
  return value as unknown as ManifestObject['object'];
}

function invalid(message: string, where: Record<string, unknown>): ToolError {
  return new ToolError(`Invalid manifest: ${message}`, { code: 'INVALID_INPUT', details: { parameter: 'manifest', ...where } });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
